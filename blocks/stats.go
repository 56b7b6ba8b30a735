package blocks

import (
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/askslack/askslack/waterfall"
)

// StatsRows is the most agents and people /askslack stats lists each.
const StatsRows = 15

// Stats is the /askslack stats reply: how the team answered agents' asks
// over window (s, read from the audit trail), over all, per agent and per
// person.
func Stats(s waterfall.Stats, window string) Message {
	head := fmt.Sprintf(":bar_chart: *Answers to agents' questions, last %s*", Escape(window))
	if s.Asked == 0 {
		return Message{Text: "No agent asked anything in the last " + window + ".",
			Blocks: []slack.Block{slack.NewSectionBlock(mrkdwnText(head+"\nNo agent asked anything."), nil, nil)}}
	}
	overall := fmt.Sprintf("%s\n%s\n%s · agents waited %s on people in all", head, counts(s.Tally), took(s.Tally), Duration(s.Waited))
	bs := []slack.Block{slack.NewSectionBlock(mrkdwnText(overall), nil, nil)}
	var agents []string
	for _, g := range s.Agents {
		agents = append(agents, fmt.Sprintf("• `%s` — %s · %s · waited %s", Escape(oneLine(g.Name)), counts(g.Tally), took(g.Tally), Duration(g.Waited)))
	}
	bs = append(bs, listSection("stats/agents", "*Per agent*", agents)...)
	var people []string
	for _, g := range s.People {
		people = append(people, fmt.Sprintf("• %s — %s · %s", person(g), answers(g.Tally), took(g.Tally)))
	}
	if len(people) > 0 {
		bs = append(bs, listSection("stats/people", "*Per person*", people)...)
	}
	if s.Partial {
		bs = append(bs, note("stats/partial", "The audit trail was too long to read whole: the newest asks are left out."))
	}
	return Message{Text: fmt.Sprintf("Last %s: %d asked, %d answered in the window, %d late, %d never.", window, s.Asked, s.InWindow, s.Late, s.Never), Blocks: bs}
}

// HomeStats is the Home tab's line on the person's own answers (g, from
// Stats.Person; ok false when they gave none) over window.
func HomeStats(g waterfall.Group, ok bool, window string) slack.Block {
	text := "*Your answers, last " + Escape(window) + ":* none yet."
	if ok && g.Answered() > 0 {
		text = "*Your answers, last " + Escape(window) + ":* " + answers(g.Tally) + " · " + took(g.Tally)
	}
	return note("home/stats", text)
}

func counts(t waterfall.Tally) string {
	rules := ""
	if t.ByRule > 0 {
		rules = fmt.Sprintf(" (%d by standing rules)", t.ByRule)
	}
	return fmt.Sprintf("%d asked: %d answered in the window%s, %d late, %d never", t.Asked, t.InWindow, rules, t.Late, t.Never)
}

func answers(t waterfall.Tally) string {
	return fmt.Sprintf("%d answered (%d in the window, %d late)", t.Answered(), t.InWindow, t.Late)
}

func took(t waterfall.Tally) string {
	switch {
	case t.Answered() == 0:
		return "no answers"
	case t.ByPeople() == 0:
		return "no answers by people"
	}
	return "time to answer p50 " + Duration(t.P50) + ", p90 " + Duration(t.P90)
}

// person names who answered: a Slack user by mention, an answer surface by
// name.
func person(g waterfall.Group) string {
	if (g.Surface == waterfall.SurfaceSlack || g.Surface == waterfall.SurfaceWeb) && (strings.HasPrefix(g.Key, "U") || strings.HasPrefix(g.Key, "W")) {
		return "<@" + Escape(g.Key) + ">"
	}
	return "`" + Escape(oneLine(g.Name)) + "` (" + Escape(g.Surface) + ")"
}

// listSection is a heading and its lines, at most StatsRows of them, in
// sections within Slack's text limit.
func listSection(id, heading string, lines []string) []slack.Block {
	more := 0
	if len(lines) > StatsRows {
		lines, more = lines[:StatsRows], len(lines)-StatsRows
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more", more))
	}
	text := heading + "\n" + strings.Join(lines, "\n")
	pieces, _ := chunk(text, maxSectionText, maxSectionText*4)
	out := make([]slack.Block, 0, len(pieces))
	for i, p := range pieces {
		out = append(out, slack.NewSectionBlock(mrkdwnText(p), nil, nil, slack.SectionBlockOptionBlockID(fmt.Sprintf("%s/%d", id, i))))
	}
	return out
}

// Duration is a span in words a person reads at a glance: 45s, 12m, 3h 20m,
// 2d 4h.
func Duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute)/time.Minute))
	case d < 24*time.Hour:
		d = d.Round(time.Minute)
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh %dm", h, m)
	}
	d = d.Round(time.Hour)
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd %dh", days, h)
}
