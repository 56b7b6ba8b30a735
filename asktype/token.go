package asktype

import "time"

// AgentToken is a personal agent token: a bearer token for the host API
// that a person connected from their terminal (askslack login, the OAuth
// 2.0 device authorization grant) and that works for them. It holds the
// agent role only — it asks, and reads, waits on and withdraws its own
// asks; it never answers — and its asks carry its owner as their
// principal. The store keeps only the hash of its secret.
type AgentToken struct {
	// ID is public: shown in App Home and the console, named by the API's
	// DELETE /v1/tokens/{id}. It is no part of the secret.
	ID string `json:"id"`
	// Name is what the terminal called itself ("alice-laptop"), unique
	// among its owner's live tokens.
	Name string `json:"name"`
	// Owner is the Slack user who confirmed the connection, OwnerName
	// their name as Slack gave it at sign-in.
	Owner     string `json:"owner"`
	OwnerName string `json:"ownerName,omitempty"`
	// Team is the Slack workspace the owner signed in to when they
	// confirmed the connection: the token's asks belong to it ("" when the
	// deployment serves one workspace).
	Team string `json:"team,omitempty"`
	// Kinds are the agents the terminal said it connects (claude, codex,
	// mcp, …): shown, never checked.
	Kinds []string `json:"kinds,omitempty"`
	// Hash is the hex SHA-256 of the secret: how a bearer is found, and
	// all the store holds of it.
	Hash string `json:"hash"`
	// ConnectAddr is the address the login came from (the address the
	// bot saw: a proxy's, behind one).
	ConnectAddr string    `json:"connectAddr,omitempty"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`
	// LastUsed and LastAddr are when and from where it was last used (kept
	// to the minute, and whenever the address changes).
	LastUsed time.Time `json:"lastUsed,omitempty"`
	LastAddr string    `json:"lastAddr,omitempty"`
	// Revoked is when it was revoked (zero while it is not), RevokedBy
	// who did (a Slack user id, an operator token's name, or the agent
	// itself: askslack logout).
	Revoked   time.Time `json:"revoked,omitempty"`
	RevokedBy string    `json:"revokedBy,omitempty"`
}

// Live reports whether the token may be used at now: not revoked, not
// expired.
func (t AgentToken) Live(now time.Time) bool {
	return t.Revoked.IsZero() && now.Before(t.Expires)
}

// Audit events of personal agent tokens. They change no ask: CallID is
// empty, Caller names the token's caller.
const (
	EventAgentConnected = "agent-connected" // Respondent: who confirmed; Detail: the token, its agents, where from
	EventAgentRevoked   = "agent-revoked"   // Respondent: who revoked it (none when the agent signed itself out); Detail: the token
	EventAgentRefused   = "agent-refused"   // a revoked or expired token was presented (Detail: the token, where from)
)

// Revoked is the AbortReason of an ask withdrawn because the personal
// agent token that made it was revoked.
const Revoked AbortReason = "revoked"
