package mdparse

import (
	"os"
	"strings"
	"testing"
)

// checkedGoldmark is the goldmark release link.go and linkref.go were
// copied from and checked against. Bumping goldmark in go.mod fails this
// test until someone has re-read the copies against the new release:
//
//   - diff goldmark's parser/link.go and parser/link_ref.go between the two
//     releases, and carry every fix into link.go and linkref.go, keeping
//     their bounds (see each file's header);
//   - run the CommonMark spec examples (internal/mdhtml) and this package's
//     hostile-input tests;
//   - then update this constant and the version named in both files'
//     headers.
const checkedGoldmark = "v1.8.7"

func TestGoldmarkIsTheReleaseTheCopiesWereCheckedAgainst(t *testing.T) {
	// The test binary carries no module versions: read go.mod's require.
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/yuin/goldmark" {
			got = f[1]
		}
	}
	if got != checkedGoldmark {
		t.Fatalf("go.mod has goldmark %s, but link.go and linkref.go were checked against %s: re-read them against %s "+
			"(see checkedGoldmark's comment for what to re-check), then update checkedGoldmark and their headers", got, checkedGoldmark, got)
	}
	for _, f := range []string{"link.go", "linkref.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if head, _, _ := strings.Cut(string(b), "import ("); !strings.Contains(head, "github.com/yuin/goldmark "+checkedGoldmark) {
			t.Errorf("%s's header does not name goldmark %s, the release it was checked against", f, checkedGoldmark)
		}
	}
}
