package hostapi

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/askslack/askslack/waterfall"
)

// TestHostAPIPageStatesTheLimits: docs/host-api.md's Limits table gives
// each field the limit the code enforces, and the error code, so a change
// of a limit shows here until the page follows.
func TestHostAPIPageStatesTheLimits(t *testing.T) {
	raw, err := os.ReadFile("../docs/host-api.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	i := strings.Index(page, "\n## Limits\n")
	if i < 0 {
		t.Fatal("docs/host-api.md has no Limits section")
	}
	sec := page[i+1:]
	if j := strings.Index(sec[1:], "\n## "); j >= 0 {
		sec = sec[:j+1]
	}
	rows := map[string]string{} // the field column → the rest of the row
	for _, l := range strings.Split(sec, "\n") {
		cells := strings.Split(l, " | ")
		if len(cells) == 3 && strings.HasPrefix(l, "| ") {
			rows[strings.TrimPrefix(cells[0], "| ")] = cells[1] + " | " + cells[2]
		}
	}
	n := func(v int) string { // as the page writes numbers: 100,000
		s := fmt.Sprint(v)
		for k := len(s) - 3; k > 0; k -= 3 {
			s = s[:k] + "," + s[k:]
		}
		return s
	}
	for _, c := range []struct {
		field string
		want  []string
	}{
		{"the request body", []string{n(maxBody) + " bytes", "BAD_REQUEST"}},
		{"`callId`, `agent.sessionId`", []string{fmt.Sprintf("1–%d characters", waterfall.MaxIDLen)}},
		{"`questions`", []string{fmt.Sprintf("1–%d", waterfall.MaxQuestions), "EMPTY_QUESTIONS"}},
		{"`questions[].id`", []string{fmt.Sprintf("1–%d characters", waterfall.MaxQuestionIDL)}},
		{"`questions[].question`, `.detail`, `.header`", []string{n(waterfall.MaxTextLen) + " characters", "BAD_REQUEST"}},
		{"`questions[].options`", []string{n(waterfall.MaxOptions)}},
		{"`options[].label`", []string{n(waterfall.MaxLabelLen) + " characters"}},
		{"`options[].description`, `.preview`", []string{n(waterfall.MaxTextLen) + " characters"}},
		{"`timeoutMs`", []string{n(int(waterfall.MaxTimeout / time.Millisecond)), "BAD_TIMEOUT"}},
		{"`channel`", []string{fmt.Sprintf("%d characters", waterfall.MaxChannelLen)}},
		{"`approvals`", []string{fmt.Sprintf("1–%d", waterfall.MaxApprovals)}},
		{"`approvers`", []string{fmt.Sprintf("%d Slack", waterfall.MaxApprovers)}},
		{"`permission.tool`", []string{fmt.Sprintf("1–%d characters", waterfall.MaxToolLen)}},
		{"`permission.command`", []string{n(waterfall.MaxCommandLen) + " bytes"}},
		{"`permission.path`", []string{n(waterfall.MaxPathLen) + " bytes"}},
		{"`permission.repo`", []string{n(waterfall.MaxRepoLen) + " bytes"}},
		{"`permission.editable`", []string{fmt.Sprintf("%d fields", waterfall.MaxEditableFields)}},
		{"`editable[].label`", []string{fmt.Sprintf("%d characters", waterfall.MaxEditLabelLen)}},
		{"`editable[].value`", []string{n(waterfall.MaxEditLen) + " characters"}},
		{"an answer's `custom` text", []string{n(waterfall.MaxTextLen) + " characters", "BAD_ANSWER"}},
		{"an answer's `edited` values", []string{n(waterfall.MaxEditLen) + " characters", "BAD_ANSWER"}},
		{"`POST /v1/notices` `text`", []string{n(maxNoticeText) + " characters"}},
		{"`?waitMs=` (`GET /v1/asks/{callId}`, `…/messages`)", []string{n(int(maxWait / time.Millisecond)), "BAD_REQUEST"}},
	} {
		row, ok := rows[c.field]
		if !ok {
			t.Errorf("the Limits table has no row for %s", c.field)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(row, w) {
				t.Errorf("the Limits row of %s says %q; want %q in it", c.field, row, w)
			}
		}
	}
}
