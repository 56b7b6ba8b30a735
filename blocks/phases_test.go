package blocks

import (
	"strings"
	"testing"
)

func TestIsUserID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"U0ALICE", true},
		{"W0123ABCD", true},
		{"U1", true},
		{"U" + strings.Repeat("A", 31), true},
		{"", false},
		{"U", false},
		{"W", false},
		{"U" + strings.Repeat("A", 32), false}, // over 32 characters
		{"u0alice", false},
		{"U0alice", false},
		{"S0OPS", false}, // a user group, not a user
		{"C0QUESTIONS", false},
		{"U0AL ICE", false},
		{"U0ALICE>", false},
		{"alice@example.com", false},
		{"UÄ", false},
	} {
		if got := IsUserID(tt.s); got != tt.want {
			t.Errorf("IsUserID(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
