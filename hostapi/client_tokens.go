package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/askslack/askslack/tokens"
)

// DeviceError is a refusal from the device grant's endpoints (RFC 8628):
// its RFC code and the bot's words.
type DeviceError struct {
	Status      int
	Code        string
	Description string
}

func (e *DeviceError) Error() string {
	if e.Description != "" {
		return e.Code + ": " + e.Description
	}
	return e.Code
}

// StartLogin asks the bot for a device code (askslack login): name and
// kinds say what is connecting. A bot without the endpoint (older, or not
// askslack) is a *DeviceError with Code "not_supported".
func (c *Client) StartLogin(ctx context.Context, name string, kinds []string) (tokens.Authorization, error) {
	var a tokens.Authorization
	err := c.device(ctx, DeviceCodePath, url.Values{"client_id": {LoginClientID}, "name": {name}, "kinds": {strings.Join(kinds, ",")}}, &a)
	return a, err
}

// PollLogin polls once with the device code: the token once the person
// confirmed, else a *DeviceError (authorization_pending, slow_down,
// access_denied, expired_token, …).
func (c *Client) PollLogin(ctx context.Context, deviceCode string) (DeviceToken, error) {
	var t DeviceToken
	err := c.device(ctx, DeviceTokenPath, url.Values{"client_id": {LoginClientID}, "grant_type": {GrantDeviceCode}, "device_code": {deviceCode}}, &t)
	return t, err
}

func (c *Client) device(ctx context.Context, path string, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.BaseURL, "/")+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("POST %s: decoding response: %w", path, err)
		}
		return nil
	}
	var oe OAuthError
	if json.Unmarshal(data, &oe) == nil && oe.Error != "" {
		return &DeviceError{Status: resp.StatusCode, Code: oe.Error, Description: oe.Description}
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusNotFound {
		return &DeviceError{Status: resp.StatusCode, Code: "not_supported",
			Description: "this bot does not offer askslack login (it is older than this askslack, or not askslack at all)"}
	}
	return &HTTPError{Method: http.MethodPost, Path: path, StatusCode: resp.StatusCode, Body: string(bytes.TrimSpace(data))}
}

// Whoami says who the client's token is to the bot.
func (c *Client) Whoami(ctx context.Context) (Whoami, error) {
	var w Whoami
	err := c.do(ctx, http.MethodGet, "/v1/whoami", nil, &w)
	return w, err
}

// RevokeToken revokes a personal agent token: any, with an operator's
// token; the client's own, with it (askslack logout).
func (c *Client) RevokeToken(ctx context.Context, id string) (TokenInfo, error) {
	var res struct {
		Token TokenInfo `json:"token"`
	}
	err := c.do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, &res)
	return res.Token, err
}

// Tokens lists the live personal agent tokens (an operator's token);
// owner narrows them to one person's.
func (c *Client) Tokens(ctx context.Context, owner string) ([]TokenInfo, error) {
	p := "/v1/tokens"
	if owner != "" {
		p += "?owner=" + url.QueryEscape(owner)
	}
	var l TokenList
	err := c.do(ctx, http.MethodGet, p, nil, &l)
	return l.Tokens, err
}
