// Command fakeslack runs the fake Slack of package slackfake on a fixed
// address, to drive askslack by hand. Point the bot at the printed
// SLACK_API_URL, then click with curl, e.g.
//
//	curl -s localhost:9999/_fake/messages
//	curl -s -d '{"channel":"D0ALICE","ts":"…","user":"U0ALICE","button":"Approach A"}' localhost:9999/_fake/click
//
// See the slackfake package documentation for the whole control API.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/askslack/askslack/internal/slackfake"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9999", "listen address")
	secret := flag.String("signing-secret", "", "signing secret for HTTP interaction deliveries")
	botToken := flag.String("bot-token", "", "the only bot token the Web API accepts (empty: any xoxb-)")
	appToken := flag.String("app-token", "", "the app-level token apps.connections.open accepts (empty: any xapp-)")
	interactionURL := flag.String("interaction-url", "", "where HTTP interactions are POSTed (Socket Mode is used when a client is connected)")
	users := flag.String("users", "U0ALICE:alice:alice@example.com,U0BOB:bob:bob@example.com",
		"workspace members, comma-separated id:name[:email[:team id]]")
	oidcClientID := flag.String("oidc-client-id", "", "client_id of the Sign in with Slack app (empty: no such app)")
	oidcSecret := flag.String("oidc-client-secret", "", "its client_secret (empty: any)")
	oidcRedirects := flag.String("oidc-redirect-uris", "", "its Redirect URLs, comma-separated (empty: any http(s) URL)")
	teams := flag.String("teams", "", "workspaces, comma-separated id[:domain[:enterprise id]] (empty: one, T0FAKE); the first is the default")
	channelTeams := flag.String("channel-teams", "", "channel:team,… — the workspace that owns each channel (others: the default)")
	clientID := flag.String("client-id", "", "the app's OAuth client_id for /oauth/v2/authorize and oauth.v2.access (empty: no OAuth)")
	clientSecret := flag.String("client-secret", "", "its client_secret (empty: any)")
	oauthRedirects := flag.String("oauth-redirect-uris", "", "its OAuth Redirect URLs, comma-separated (empty: any http(s) URL)")
	rotation := flag.Bool("token-rotation", false, "the app has token rotation on: bot tokens expire after 12h and come with refresh tokens")
	verbose := flag.Bool("v", false, "log every call and delivery")
	flag.Parse()

	opts := slackfake.Options{
		BotToken:         *botToken,
		AppToken:         *appToken,
		SigningSecret:    *secret,
		InteractionURL:   *interactionURL,
		OIDCClientID:     *oidcClientID,
		OIDCClientSecret: *oidcSecret,
		ClientID:         *clientID,
		ClientSecret:     *clientSecret,
		TokenRotation:    *rotation,
	}
	opts.OAuthRedirectURIs = list(*oauthRedirects)
	for _, t := range list(*teams) {
		parts := strings.SplitN(t, ":", 3)
		team := slackfake.Team{ID: parts[0]}
		if len(parts) > 1 {
			team.Domain = parts[1]
		}
		if len(parts) > 2 {
			team.EnterpriseID = parts[2]
		}
		opts.Teams = append(opts.Teams, team)
	}
	for _, ct := range list(*channelTeams) {
		if ch, team, ok := strings.Cut(ct, ":"); ok {
			if opts.ChannelTeams == nil {
				opts.ChannelTeams = map[string]string{}
			}
			opts.ChannelTeams[ch] = team
		}
	}
	for _, u := range strings.Split(*oidcRedirects, ",") {
		if u = strings.TrimSpace(u); u != "" {
			opts.OIDCRedirectURIs = append(opts.OIDCRedirectURIs, u)
		}
	}
	for _, u := range strings.Split(*users, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		parts := strings.SplitN(u, ":", 4)
		user := slackfake.User{ID: parts[0], Name: strings.ToLower(parts[0])}
		if len(parts) > 1 {
			user.Name = parts[1]
		}
		if len(parts) > 2 {
			user.Email = parts[2]
		}
		if len(parts) > 3 {
			user.TeamID = parts[3]
		}
		opts.Users = append(opts.Users, user)
	}
	if *verbose {
		opts.Logf = log.Printf
	}

	s := slackfake.New(opts)
	if err := s.StartAt(*addr); err != nil {
		log.Fatalf("fakeslack: %v", err)
	}
	defer s.Close()
	fmt.Printf("SLACK_API_URL=%s\n", s.APIURL())
	fmt.Printf("control API: %s/_fake/messages, /_fake/calls?method=, /_fake/views, POST /_fake/click …\n", s.URL())
	if opts.ClientID != "" {
		fmt.Printf("OAuth v2: %s/oauth/v2/authorize\n", s.URL())
	}
	if opts.OIDCClientID != "" {
		fmt.Printf("Sign in with Slack: %s/.well-known/openid-configuration\n", s.URL())
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
}

// list splits a comma-separated flag value, dropping empty items.
func list(v string) []string {
	var out []string
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
