package tokens_test

import (
	"strings"
	"testing"

	"github.com/askslack/askslack/tokens"
)

// What a person types as a code and what a terminal sends as a name are
// outside input: read without panicking, into their alphabets only.
func FuzzCodesAndNames(f *testing.F) {
	for _, s := range []string{"WDJB-MJHT", "wdjb mjht", "", "ÄÖÜ-ß", "BCDF-GHJK-", "alice-laptop", "a/b", strings.Repeat("x", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if c, ok := tokens.NormalCode(s); ok {
			if len(c) != 8 || strings.Trim(c, "BCDFGHJKLMNPQRSTVWXZ") != "" {
				t.Fatalf("NormalCode(%q) = %q", s, c)
			}
			if again, ok := tokens.NormalCode(tokens.ShowCode(c)); !ok || again != c {
				t.Fatalf("ShowCode(%q) does not read back", c)
			}
		}
		if n, err := tokens.NormalName(s); err == nil {
			if n == "" || len(n) > 40 || strings.ContainsAny(n, "@/:{} ") {
				t.Fatalf("NormalName(%q) = %q", s, n)
			}
		}
	})
}
