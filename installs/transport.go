package installs

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/askslack/askslack/workspace"
)

// Transport sends each Slack Web API call with the bot token of the
// workspace its request's context names (With), whatever token the
// client put in it: the one seam every call of the Slack side goes
// through, so none can go out with another workspace's token. A call
// that names no workspace, or one no installation serves, is refused
// before it leaves. Requests to anything but API (a click's response_url,
// which needs no token) and those with an app-level token (xapp-, Socket
// Mode's apps.connections.open) pass untouched.
type Transport struct {
	// API is the Web API's base URL ("https://slack.com/api/").
	API  string
	Base http.RoundTripper
	// apiPath is API's path with its slash ("/api/"): a method's name
	// follows it.
	apiPath string
	keeper  *Keeper
}

// NewTransport returns the Transport for calls to api through base
// (http.DefaultTransport when nil) with k's tokens.
func NewTransport(api string, base http.RoundTripper, k *Keeper) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	path := "/api/"
	if u, err := url.Parse(api); err == nil {
		path = strings.TrimSuffix(u.Path, "/") + "/"
	}
	return &Transport{API: api, Base: base, apiPath: path, keeper: k}
}

// refusedToken are Slack's answers that say a token no longer works: the
// snapshot is re-read and, when another replica has stored a newer token
// meanwhile, the call is sent once more with it (a refused call had no
// effect).
var refusedToken = [][]byte{[]byte(`"error":"token_expired"`), []byte(`"error":"invalid_auth"`), []byte(`"error":"token_revoked"`)}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.String(), t.API) || strings.HasPrefix(req.Header.Get("Authorization"), "Bearer xapp-") {
		return t.Base.RoundTrip(req)
	}
	method := strings.TrimPrefix(req.URL.Path, t.apiPath)
	ctx := req.Context()
	team := workspace.Of(ctx)
	if team == "" {
		closeBody(req)
		return nil, fmt.Errorf("%s: %w", method, ErrNoWorkspace)
	}
	in, err := t.keeper.For(ctx, team)
	if err != nil {
		closeBody(req)
		return nil, fmt.Errorf("%s in workspace %s: %w", method, team, err)
	}
	var body []byte
	if req.Body != nil {
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
	}
	resp, err := t.send(req, body, in.BotToken)
	if err != nil || !refused(resp) {
		return resp, err
	}
	t.keeper.Reread()
	again, ferr := t.keeper.For(ctx, team)
	if ferr != nil || again.BotToken == in.BotToken {
		t.keeper.log.Warn("Slack refused a workspace's token, and the store holds no other", "method", method, "team", team, "err", ferr)
		return resp, nil
	}
	t.keeper.log.Info("Slack refused a workspace's token; sending again with the one another replica stored", "method", method, "team", team)
	resp.Body.Close()
	return t.send(req, body, again.BotToken)
}

// send sends req with body and token in place of whatever token it held:
// the Authorization header, and the "token" field of a form body (where
// slack-go puts it for form methods).
func (t *Transport) send(req *http.Request, body []byte, token string) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+token)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") && len(body) > 0 {
		if form, err := url.ParseQuery(string(body)); err == nil {
			if _, ok := form["token"]; ok {
				form.Set("token", token)
				body = []byte(form.Encode())
			}
		}
	}
	if q := r.URL.Query(); q.Has("token") {
		q.Set("token", token)
		r.URL.RawQuery = q.Encode()
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return t.Base.RoundTrip(r)
}

// refused peeks at a reply for a refused token, keeping its body whole.
func refused(resp *http.Response) bool {
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), rest), rest}
	if err != nil {
		return false
	}
	for _, e := range refusedToken {
		if bytes.Contains(b, e) {
			return true
		}
	}
	return false
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
