package waterfall

import (
	"sort"
	"strings"
	"time"

	"github.com/askslack/askslack/asktype"
)

// Stats summarises the asks of a stretch of the audit trail: whether people
// answered them in their window, late or never, how long answers took, and
// how long agents waited on people — over all, per agent and per person.
type Stats struct {
	Since, Until time.Time
	Tally
	// Agents (by agent id, "" as "unnamed") and People (by who answered)
	// are ordered by asks (answers), most first.
	Agents []Group
	People []Group
	// Partial: the trail was too long to read whole; the newest part is
	// left out.
	Partial bool
}

// Tally counts asks and answers.
type Tally struct {
	// Asked is how many asks; InWindow answered inside their window (or
	// untimed), Late answered after it (the answer was queued for the
	// agent), Never not answered (withdrawn, abandoned, unanswered yet).
	// For a person, Asked is 0 and InWindow and Late count their answers.
	Asked, InWindow, Late, Never int
	// ByRule is how many of InWindow a standing rule answered, at once and
	// with no person: they are in no person's tally and not in P50/P90.
	ByRule int
	// P50 and P90 are the time from ask to a person's answer, in window or
	// late.
	P50, P90 time.Duration
	// Waited is the time agents waited on people: from each ask to its
	// answer, to the end of its window, or to its withdrawal (until now for
	// one still waiting).
	Waited time.Duration
	took   []time.Duration
}

// Answered is how many were answered, in window or late.
func (t *Tally) Answered() int { return t.InWindow + t.Late }

// ByPeople is how many people answered (Answered less ByRule).
func (t *Tally) ByPeople() int { return t.Answered() - t.ByRule }

// Group is the tally of one agent or one person.
type Group struct {
	// Key names the agent (its id) or the person (Slack user id, or the
	// name of the answer surface); Name is how to show them; Surface is
	// where a person answered ("slack", "api").
	Key, Name, Surface string
	Tally
}

// askFacts is what the trail says of one ask.
type askFacts struct {
	asked    time.Time
	agent    string
	answered time.Time // the first answer, in window or late
	late     bool
	who      *asktype.AuditRespondent
	ended    time.Time // the agent stopped waiting
}

// Summarize tallies the asks whose "asked" entry is at or after since, from
// entries (the trail from since on, oldest first), as of now.
func Summarize(entries []asktype.AuditEntry, since, now time.Time) Stats {
	asks := map[string]*askFacts{}
	var order []string
	for i := range entries {
		e := &entries[i]
		if e.CallID == "" {
			continue
		}
		f := asks[e.CallID]
		if e.Event == asktype.EventAsked {
			if f != nil || e.At.Before(since) {
				continue // a call id used again, or an ask from before the window
			}
			f = &askFacts{asked: e.At}
			if e.Agent != nil {
				f.agent = e.Agent.ID
			}
			asks[e.CallID] = f
			order = append(order, e.CallID)
			continue
		}
		if f == nil {
			continue
		}
		switch e.Event {
		case asktype.EventAnswered, asktype.EventQueued:
			if f.answered.IsZero() {
				f.answered, f.late, f.who = e.At, e.Event == asktype.EventQueued, e.Respondent
			}
			if f.ended.IsZero() {
				f.ended = e.At
			}
		case asktype.EventContinued, asktype.EventWithdrawn, asktype.EventAbandoned:
			if f.ended.IsZero() {
				f.ended = e.At
			}
		}
	}
	s := Stats{Since: since, Until: now}
	agents, people := map[string]*Group{}, map[string]*Group{}
	for _, id := range order {
		f := asks[id]
		end := f.ended
		if end.IsZero() {
			end = now
		}
		waited := max(0, end.Sub(f.asked))
		agent := group(agents, f.agent, f.agent, "")
		for _, t := range []*Tally{&s.Tally, &agent.Tally} {
			t.Asked++
			t.Waited += waited
		}
		if f.answered.IsZero() {
			s.Never++
			agent.Never++
			continue
		}
		took := max(0, f.answered.Sub(f.asked))
		tallies := []*Tally{&s.Tally, &agent.Tally}
		if f.who != nil && f.who.Surface == SurfaceRule {
			for _, t := range tallies {
				t.InWindow++
				t.ByRule++
			}
			continue
		}
		if p := personOf(f.who); p.Key != "" {
			g := group(people, p.Key, p.Name, p.Surface)
			g.Waited += waited
			tallies = append(tallies, &g.Tally)
		}
		for _, t := range tallies {
			if f.late {
				t.Late++
			} else {
				t.InWindow++
			}
			t.took = append(t.took, took)
		}
	}
	s.Tally.finish()
	s.Agents, s.People = sorted(agents), sorted(people)
	return s
}

// Person returns the tally of the person with Slack user id userID.
func (s *Stats) Person(userID string) (Group, bool) {
	for _, g := range s.People {
		if g.Key == userID {
			return g, true
		}
	}
	return Group{}, false
}

// personOf keys who answered: a Slack user by id, an answer surface by its
// name.
func personOf(r *asktype.AuditRespondent) Group {
	switch {
	case r == nil:
		return Group{}
	case r.UserID != "":
		name := r.UserName
		if name == "" {
			name = r.UserID
		}
		return Group{Key: r.UserID, Name: name, Surface: r.Surface}
	case r.UserName != "":
		return Group{Key: r.Surface + ":" + r.UserName, Name: r.UserName, Surface: r.Surface}
	}
	return Group{}
}

func group(m map[string]*Group, key, name, surface string) *Group {
	g := m[key]
	if g == nil {
		if name == "" {
			name = "unnamed"
		}
		g = &Group{Key: key, Name: name, Surface: surface}
		m[key] = g
	}
	return g
}

func sorted(m map[string]*Group) []Group {
	out := make([]Group, 0, len(m))
	for _, g := range m {
		g.finish()
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Asked+out[i].Answered(), out[j].Asked+out[j].Answered()
		if a != b {
			return a > b
		}
		return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name)
	})
	return out
}

// finish computes the percentiles (nearest rank) and drops the samples.
func (t *Tally) finish() {
	if len(t.took) > 0 {
		sort.Slice(t.took, func(i, j int) bool { return t.took[i] < t.took[j] })
		t.P50, t.P90 = rank(t.took, 50), rank(t.took, 90)
	}
	t.took = nil
}

func rank(sorted []time.Duration, p int) time.Duration {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
