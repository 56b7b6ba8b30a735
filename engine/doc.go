// Package engine runs asks over a shared store: the Host creates an ask,
// holds the caller's wait, settles it exactly once across replicas (the
// store's transitions), applies quorum and standing rules, queues late
// answers for the agent, and keeps the audit trail. It speaks the domain's
// types (package waterfall, package asktype) to its callers — the HTTP API
// (hostapi) and the Slack surface (slackbot, through an interface
// of its own) — and the store's roles to the store.
package engine
