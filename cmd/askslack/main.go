// Command askslack lets a team answer an AI agent's questions in Slack.
//
//	askslack                 run the bot (configured by environment; see README)
//	askslack try             the bot with a fake Slack in-process and a page that shows it
//	askslack login|logout|whoami  connect this machine's agents as you (Sign in with Slack), or stop
//	askslack ask …           ask a running bot a question from the terminal
//	askslack render          print the Block Kit for a request read from stdin
//	askslack mcp             stdio MCP server for coding agents
//	askslack hook claude|codex  answer Claude Code's and Codex's hook events from Slack
//	askslack audit [verify]  print (or verify) the hash-chained audit trail
//	askslack webhooks …      list the webhook endpoints, their dead letters; redeliver them
//	askslack bench           measure the cost of an ask against a fake Slack
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/askslack/askslack/cmd/askslack/internal/askcmd"
	"github.com/askslack/askslack/cmd/askslack/internal/audit"
	"github.com/askslack/askslack/cmd/askslack/internal/bench"
	"github.com/askslack/askslack/cmd/askslack/internal/cli"
	"github.com/askslack/askslack/cmd/askslack/internal/hookcmd"
	"github.com/askslack/askslack/cmd/askslack/internal/login"
	"github.com/askslack/askslack/cmd/askslack/internal/mcpserver"
	"github.com/askslack/askslack/cmd/askslack/internal/render"
	"github.com/askslack/askslack/cmd/askslack/internal/service"
	"github.com/askslack/askslack/cmd/askslack/internal/try"
	"github.com/askslack/askslack/cmd/askslack/internal/webhooks"
)

const usage = `usage:
  askslack                    run the bot (configuration from the environment; see README)
  askslack try [--addr a]     try it without Slack or Redis: the bot, a fake Slack in-process and a
                              page at http://127.0.0.1:8080/ that shows the channel as Slack would
  askslack login [flags]      connect this machine's agents to a bot as you: sign in with Slack in a
                              browser, confirm; the token is kept for askslack ask, mcp and hook
  askslack logout [flags]     revoke that token and forget it; askslack whoami says who a token is
  askslack ask [flags]        ask a running bot a question and print the answer
  askslack render [flags]     print the Slack message (and modals) for a request read from stdin
  askslack mcp [flags]        serve the ask_user_question MCP tools over stdio (for Claude Code, Codex, …)
  askslack hook claude|codex [flags]
                              run as an agent hook: ask in Slack, print the agent's decision JSON
                              (--print-settings / --print-config print the snippet to install it)
  askslack audit [flags]      print the audit trail (operator token); askslack audit verify checks its hash chain
  askslack webhooks [dead NAME | redeliver NAME ID…|--all] [flags]
                              the webhook endpoints (operator token): cursor, lag, errors; dead letters; redeliver
  askslack bench [flags]      measure asks/s, CPU, Redis and Slack calls per ask against a fake Slack (see README)
  askslack help               show this help
`

func main() {
	if err := dispatch(os.Args[1:]); err != nil {
		if !errors.Is(err, cli.ErrReported) {
			fmt.Fprintln(os.Stderr, "askslack:", err)
		}
		os.Exit(cli.ExitCode(err)) // a subcommand's *cli.ExitError says which; else 1
	}
}

func dispatch(args []string) error {
	if len(args) == 0 {
		return service.Serve(nil)
	}
	switch args[0] {
	case "serve":
		return service.Serve(args[1:])
	case "try":
		return try.Run(args[1:], os.Stdout)
	case "login":
		return login.Run(args[1:], os.Stdout, os.Stderr)
	case "logout":
		return login.Logout(args[1:], os.Stdout, os.Stderr)
	case "whoami":
		return login.Whoami(args[1:], os.Stdout, os.Stderr)
	case "ask":
		return askcmd.Run(args[1:], os.Stdout)
	case "render":
		return render.Run(args[1:], os.Stdin, os.Stdout)
	case "mcp":
		return mcpserver.Run(args[1:])
	case "hook":
		return hookcmd.Run(args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "audit":
		return audit.Run(args[1:], os.Stdout)
	case "webhooks":
		return webhooks.Run(args[1:], os.Stdout)
	case "bench":
		return bench.Run(args[1:], os.Stdout)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}
