package store

import (
	"testing"

	"github.com/askslack/askslack/asktype"
)

func rec(id string, ver int64, st asktype.State) *asktype.Ask {
	return &asktype.Ask{CallID: id, Version: ver, State: st}
}

// The Hub's remembered record is current until a newer version is
// announced; it is kept only while someone watches the ask.
func TestHubLatestFollowsAnnouncements(t *testing.T) {
	var h Hub
	h.Record(rec("c1", 1, asktype.Open))
	if _, ok := h.Latest("c1"); ok {
		t.Fatal("a record of an unwatched ask was kept")
	}
	ch, stop := h.Subscribe(AskTopic("c1"))
	h.Changed(rec("c1", 2, asktype.Open))
	<-ch
	if a, ok := h.Latest("c1"); !ok || a.Version != 2 {
		t.Fatalf("Latest after a local change = %+v, %v", a, ok)
	}
	h.Announce("c1", 2) // the feed's echo of that change wakes nobody
	select {
	case <-ch:
		t.Fatal("the echo of a change already seen woke the waiter")
	default:
	}
	h.Announce("c1", 3) // another replica moved it on
	<-ch
	if _, ok := h.Latest("c1"); ok {
		t.Fatal("Latest returned a record older than an announced version")
	}
	h.Record(rec("c1", 2, asktype.Open)) // a read that raced the change
	if _, ok := h.Latest("c1"); ok {
		t.Fatal("a record older than the announced version became current")
	}
	h.Record(rec("c1", 3, asktype.Settled))
	if a, ok := h.Latest("c1"); !ok || a.State != asktype.Settled {
		t.Fatalf("Latest after reading the new version = %+v, %v", a, ok)
	}
	a, _ := h.Latest("c1")
	a.State = asktype.Aborted // callers get a copy
	if b, _ := h.Latest("c1"); b.State != asktype.Settled {
		t.Fatal("Latest handed out the remembered record itself")
	}
	h.Forget() // the feed reconnected: changes may have been lost
	<-ch
	if _, ok := h.Latest("c1"); ok {
		t.Fatal("a record survived a feed reconnect")
	}
	stop()
	h.Record(rec("c1", 4, asktype.Settled))
	if _, ok := h.Latest("c1"); ok {
		t.Fatal("a record was kept after the last watcher left")
	}
}

// A version announced while nobody watched still stops an older record,
// recorded after a watcher arrives, from passing as current.
func TestHubRemembersAnnouncementsOfUnwatchedAsks(t *testing.T) {
	var h Hub
	h.Announce("c1", 5)
	_, stop := h.Subscribe(AskTopic("c1"))
	defer stop()
	h.Record(rec("c1", 4, asktype.Open))
	if _, ok := h.Latest("c1"); ok {
		t.Fatal("a record older than an earlier announcement became current")
	}
	h.Record(rec("c1", 5, asktype.Settled))
	if a, ok := h.Latest("c1"); !ok || a.Version != 5 {
		t.Fatalf("Latest = %+v, %v", a, ok)
	}
}

// The feed's echo of a transition still in flight here does not wake the
// waiters (the transition's result will, without a read); an echo of
// another replica's change held back meanwhile wakes them when it ends.
func TestHubHoldsEchoesOfTransitionsInFlight(t *testing.T) {
	var h Hub
	ch, stop := h.Subscribe(AskTopic("c1"))
	defer stop()
	h.Record(rec("c1", 1, asktype.Open))
	end := h.Begin("c1")
	h.Announce("c1", 2) // the echo, before the reply
	select {
	case <-ch:
		t.Fatal("an echo of a transition in flight woke the waiter")
	default:
	}
	h.Changed(rec("c1", 2, asktype.Settled))
	end()
	<-ch
	if a, ok := h.Latest("c1"); !ok || a.Version != 2 {
		t.Fatalf("Latest = %+v, %v", a, ok)
	}
	select {
	case <-ch:
		t.Fatal("woken twice for one change")
	default:
	}
	end = h.Begin("c1")
	h.Announce("c1", 3) // another replica's change, while ours fails
	end()
	<-ch
	if _, ok := h.Latest("c1"); ok {
		t.Fatal("a record older than the announced version is current")
	}
}

// A transition of this process that loses to another replica's (a second
// click on an ask the other replica just settled) replies with the winner's
// record, which reaches only Record. The waiters were never woken for that
// version, so the announcement must still wake them, whichever of the two
// arrives first (issue 20: one blocking agent in twenty hung).
func TestHubWakesForAnotherReplicasChangeAReplyBroughtFirst(t *testing.T) {
	for name, announceFirst := range map[string]bool{"announced in flight": true, "announced after the reply": false} {
		t.Run(name, func(t *testing.T) {
			var h Hub
			ch, stop := h.Subscribe(AskTopic("c1"))
			defer stop()
			h.Record(rec("c1", 1, asktype.Open)) // the waiter's read
			end := h.Begin("c1")                 // the losing click's settle
			if announceFirst {
				h.Announce("c1", 2) // the winner, on the other replica
			}
			h.Record(rec("c1", 2, asktype.Settled)) // the loser's reply: already settled
			end()
			if !announceFirst {
				h.Announce("c1", 2)
			}
			select {
			case <-ch:
			default:
				t.Fatal("the waiter was not woken for the other replica's answer")
			}
			if a, ok := h.Latest("c1"); !ok || a.State != asktype.Settled {
				t.Fatalf("Latest = %+v, %v", a, ok)
			}
		})
	}
}

// A read by anyone on this replica (the mirror, a status GET) that brings
// another replica's change before its announcement does not swallow the
// wake of the other waiters on the ask.
func TestHubReadDoesNotStandInForTheWake(t *testing.T) {
	var h Hub
	ch, stop := h.Subscribe(AskTopic("c1"))
	defer stop()
	h.Record(rec("c1", 1, asktype.Open))
	h.Record(rec("c1", 2, asktype.Settled)) // someone else's read
	h.Announce("c1", 2)
	select {
	case <-ch:
	default:
		t.Fatal("a read swallowed the announcement's wake")
	}
	h.Announce("c1", 2) // a duplicate announcement wakes nobody again
	select {
	case <-ch:
		t.Fatal("woken twice for one version")
	default:
	}
}
