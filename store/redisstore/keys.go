package redisstore

import "github.com/askslack/askslack/asktype"

// Every Redis key askslack uses is built here. All keys of one ask carry the
// ask's {callId} hash tag, so each transition script touches one Cluster slot;
// the cross-ask indexes (session, deadlines, claims) are updated outside the
// scripts and are only ever hints that readers re-check against the ask.
type keys struct {
	prefix string
	// schema2 writes what schema 2 names differently (Options.Schema):
	// the stale index under its own hash tag.
	schema2 bool
}

// ask is the hash holding one ask's record.
func (k keys) ask(callID string) string { return k.prefix + ":ask:{" + callID + "}" }

// lease is a named lease on one ask ("post", "wait"): "holder|untilMs".
func (k keys) lease(callID, name string) string { return k.ask(callID) + ":lease:" + name }

// session is a sorted set of the session's call ids scored by creation seq.
// It and the session's other keys expire retention after the session's
// latest ask (plus its wait), refreshed on each new ask.
func (k keys) session(sessionID string) string { return k.prefix + ":session:{" + sessionID + "}" }

// active is a sorted set of the session's active (open, continued) asks,
// scored by seq; its size is checked against store.MaxSessionAsks.
func (k keys) active(sessionID string) string { return k.session(sessionID) + ":active" }

// replies is a sorted set of the session's continued asks with a queued
// reply, scored by when the reply arrived (ms): all that polling for late
// answers reads.
func (k keys) replies(sessionID string) string { return k.session(sessionID) + ":replies" }

// deadlines is a sorted set of open timed asks scored by deadline (ms).
func (k keys) deadlines() string { return k.prefix + ":deadlines" }

// claims is a sorted set of open timed asks scored by when their wait lease
// ends (ms); 0 means nobody holds it.
func (k keys) claims() string { return k.prefix + ":claims" }

// events is the pub/sub channel carrying change hints ("a:<callId>", "s:<sessionId>").
func (k keys) events() string { return k.prefix + ":events" }

// budget is a token bucket hash ("tokens", "at" ms) shared by replicas.
func (k keys) budget(name string) string { return k.prefix + ":budget:{" + name + "}" }

// turnWaiting is a sorted set of the groups waiting for budget name's
// tokens, scored by when their registration ends (ms); turnServed of when
// each was last served (ms). Both share the budget's slot.
func (k keys) turnWaiting(name string) string { return k.budget(name) + ":waiting" }
func (k keys) turnServed(name string) string  { return k.budget(name) + ":served" }

// turnClass is a hash of each waiting group's class (group → class).
func (k keys) turnClass(name string) string { return k.budget(name) + ":class" }

// byState is a sorted set of the asks in an active state (open, continued),
// scored by seq; it backs the questions gauge.
func (k keys) byState(s asktype.State) string { return k.prefix + ":state:" + string(s) }

// filedVersions is a hash of the version of each ask whose membership of
// byState(s) was last written (callId → version), and filedAt a sorted
// set of when (ms), so old entries can go. Their hash tag is byState(s)'s
// whole name, which puts them in its Cluster slot (a key without braces
// hashes by its whole name): the script that writes the set checks the
// version in one slot.
func (k keys) filedVersions(s asktype.State) string { return "{" + k.byState(s) + "}:ver" }
func (k keys) filedAt(s asktype.State) string       { return "{" + k.byState(s) + "}:at" }

// stale is a sorted set of asks whose message may be behind, scored by the
// time of the change (ms); entries leave when the message catches up. It is
// the index this store writes: schema 1's "<prefix>:stale", which in Cluster
// hashes to slot 977, the {audit} chain's shard (slot 1463) in any even
// split up to 11 primaries, or schema 2's "<prefix>:{stale}" (slot 9679: the
// middle of the slot space, away from {audit} in every even split). Stale
// reads both (staleOther), so replicas writing either hold each other's.
func (k keys) stale() string {
	if k.schema2 {
		return k.prefix + ":{stale}"
	}
	return k.prefix + ":stale"
}

// staleOther is the stale index of the other schema.
func (k keys) staleOther() string { return keys{k.prefix, !k.schema2}.stale() }

// detached is a sorted set of asks whose blocking caller went away, scored
// by when their re-attach grace ends (ms).
func (k keys) detached() string { return k.prefix + ":detached" }

// schema is the stored schema marker, a hash (version, minReader,
// release, at): the highest schema version any release wrote here, the
// oldest version that can read it, and which release wrote it (schema.go).
func (k keys) schema() string { return k.prefix + ":schema" }
