package hook

import (
	"testing"
	"time"
)

func TestQuestionTimeout(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      string
		settings []string
		want     time.Duration
		ok       bool
	}{
		{"unset: the terminal waits", "", nil, 0, false},
		{"unset in every file", "", []string{`{"model":"x"}`, `{}`}, 0, false},
		{"the variable wins", "4000", []string{`{"askUserQuestionTimeout":"10m"}`}, 4 * time.Second, true},
		{"the first file that sets it", "", []string{``, `{"askUserQuestionTimeout":"5m"}`, `{"askUserQuestionTimeout":"60s"}`}, 5 * time.Minute, true},
		{"never", "", []string{`{"askUserQuestionTimeout":"never"}`, `{"askUserQuestionTimeout":"60s"}`}, 0, false},
		{"an unknown value is skipped", "", []string{`{"askUserQuestionTimeout":"soon"}`, `{"askUserQuestionTimeout":"10m"}`}, 10 * time.Minute, true},
		{"not JSON is skipped", "", []string{`{`, `{"askUserQuestionTimeout":"60s"}`}, time.Minute, true},
		{"a bad variable is ignored", "x", []string{`{"askUserQuestionTimeout":"60s"}`}, time.Minute, true},
	} {
		var files [][]byte
		for _, s := range c.settings {
			files = append(files, []byte(s))
		}
		got, ok := QuestionTimeout(c.env, files...)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
