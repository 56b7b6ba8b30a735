package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/askslack/askslack/internal/slackfake"
	"github.com/askslack/askslack/waterfall"
)

func dbAsk(callID string) *waterfall.Request {
	return &waterfall.Request{CallID: callID, Agent: waterfall.Agent{ID: "orders-agent", SessionID: "s-" + callID},
		Questions: []waterfall.Question{{ID: "db", Question: "Which database for the orders service?",
			Options: []waterfall.Option{{Label: "PostgreSQL"}, {Label: "SQLite"}, {Label: "Redis"}}}}}
}

// buttonLabels are a message's button texts in order.
func buttonLabels(t *testing.T, m slackfake.Message) []string {
	var bs []struct {
		Type     string            `json:"type"`
		Elements []json.RawMessage `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &bs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bs {
		for _, raw := range b.Elements {
			var e struct {
				Type string `json:"type"`
				Text struct {
					Text string `json:"text"`
				} `json:"text"`
			}
			if b.Type == "actions" && json.Unmarshal(raw, &e) == nil && e.Type == "button" {
				out = append(out, e.Text.Text)
			}
		}
	}
	return out
}

// TestE2EAnswerMemory: alice answers bob-laptop's question; the same
// question from bob-laptop again says what she chose and offers it first;
// from another caller it says nothing, and a recall the caller sends
// itself is never shown.
func TestE2EAnswerMemory(t *testing.T) {
	t.Parallel()
	d, b := trustDeployment(t)
	ctx := testCtx(t)
	askAsyncAs(t, b, bobLaptop, dbAsk("mem-1"))
	m := waitPosted(t, ctx, d.fake, "mem-1")
	if strings.Contains(string(m.Blocks), "Last time") {
		t.Fatalf("a first question recalls something: %s", m.Blocks)
	}
	if _, err := d.fake.ClickButton(ctx, alice, m.Channel, m.TS, "SQLite", slackfake.Delivery{}); err != nil {
		t.Fatal(err)
	}
	waitMessage(t, ctx, d.fake, m.Channel, m.TS, "answered", func(m slackfake.Message) bool { return !hasControls(m) })

	askAsyncAs(t, b, bobLaptop, dbAsk("mem-2"))
	m2 := waitPosted(t, ctx, d.fake, "mem-2")
	mustContain(t, "the same question again", string(m2.Blocks), "Last time: *alice* chose *SQLite* (<!date^")
	if got := buttonLabels(t, m2); len(got) < 1 || got[0] != "SQLite" {
		t.Fatalf("buttons %v; want SQLite first", got)
	}
	if a, _ := d.fake.Message(m2.Channel, m2.TS); !hasControls(a) {
		t.Fatal("the recalled question was answered by itself")
	}

	forged := dbAsk("mem-3")
	forged.Recall = []waterfall.Recall{{Question: "db", Selected: []string{"Redis"}, By: "the CTO"}}
	askAsyncAs(t, b, ciToken, forged)
	m3 := waitPosted(t, ctx, d.fake, "mem-3")
	if strings.Contains(string(m3.Blocks), "Last time") {
		t.Fatalf("another caller's question, with a recall of its own, shows one: %s", m3.Blocks)
	}
}
