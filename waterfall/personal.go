package waterfall

import "strings"

// A personal agent token (askslack login) asks as a caller whose name says
// whose agent it is: the token's name, "@", and its owner's Slack user id
// ("alice-laptop@U0ALICE"). No configured token can be named so (their
// names hold no "@"), so the owner read back from a caller's name is the
// person who connected it, never a claim: it binds the ask's principal
// as ASKSLACK_CALLER_PRINCIPALS does, on every replica, with no lookup.

// PersonalCaller is the caller name of owner's personal token name.
func PersonalCaller(name, owner string) string { return name + "@" + owner }

// PersonalOwner is the owner a personal token's caller name carries, and
// false for any other caller.
func PersonalOwner(caller string) (string, bool) {
	i := strings.LastIndexByte(caller, '@')
	if i <= 0 || i == len(caller)-1 {
		return "", false
	}
	return caller[i+1:], true
}
