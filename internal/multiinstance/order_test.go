package multiinstance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// Concurrent writers: clients × turns each, and the bound on events a stream may carry.
const (
	writers        = 4
	turnsPerWriter = 100
	maxEvents      = 4 * writers * turnsPerWriter
)

// TestLiveEqualsReplayAcrossInstances: four clients report 100 turns each, concurrently, split
// over A and B, while a workspaceEvents subscriber on each instance follows from
// workspaceEventCursor. Both live streams must equal a replay of the log from that cursor: the
// same events in the same order, no gap, no duplicate.
func TestLiveEqualsReplayAcrossInstances(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a, b := c.start("a"), c.start("b")
	liveEqualsReplay(t, []*Instance{a, b})
}

// TestLiveEqualsReplaySQLite is the same on one SQLite instance: every writer and both
// subscribers on it.
func TestLiveEqualsReplaySQLite(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newSQLiteCluster(t)
	a := c.start("a")
	liveEqualsReplay(t, []*Instance{a, a})
}

func liveEqualsReplay(t *testing.T, ins []*Instance) {
	ctx := context.Background()
	start, err := client(ins[0]).EventCursor(ctx, workspace)
	if err != nil {
		t.Fatal(err)
	}
	live := make([]*Follower, len(ins))
	liveErr := make([]error, len(ins))
	var subscribed, following sync.WaitGroup
	for i, in := range ins {
		live[i] = &Follower{Workspace: workspace, After: start}
		subscribed.Add(1)
		following.Add(1)
		go func() {
			defer following.Done()
			liveErr[i] = live[i].followFromNow(ctx, in.WebsocketURL(), &subscribed)
		}()
	}
	subscribed.Wait()

	writeConcurrently(t, ctx, ins)
	if err := client(ins[0]).ReportSession(ctx, workspace, "end", "simulated", ""); err != nil {
		t.Fatal(err)
	}
	following.Wait()

	replay := &Follower{Workspace: workspace, After: start}
	if err := replay.Follow(ctx, ins[len(ins)-1].WebsocketURL(), maxEvents, streamIdle, SessionUpserted("end")); err != nil {
		t.Fatalf("replay: %v", err)
	}
	checkComplete(t, "replay", replay.Events)
	for i, f := range live {
		if liveErr[i] != nil {
			t.Fatalf("live subscriber %d on %s: %v", i, ins[i].Name, liveErr[i])
		}
		sameEvents(t, fmt.Sprintf("live subscriber on %s (%d resumes)", ins[i].Name, f.Resumes), f.Events, replay.Events)
	}
}

// followFromNow subscribes (Done on ready once the subscribe message is written) and follows
// until the end marker.
func (f *Follower) followFromNow(ctx context.Context, wsURL string, ready *sync.WaitGroup) error {
	s, err := SubscribeEvents(ctx, wsURL, f.Workspace, f.After)
	ready.Done()
	if err != nil {
		return err
	}
	done, err := f.read(ctx, s, maxEvents, streamIdle, SessionUpserted("end"))
	s.Close()
	if done {
		return err
	}
	// The stream ended early (RESUME_REQUIRED is allowed when a subscriber lags): resume.
	return f.Follow(ctx, wsURL, maxEvents, streamIdle, SessionUpserted("end"))
}

// writeConcurrently runs the writers at once, writer i on instance i mod len(ins): a session
// each, then its turns.
func writeConcurrently(t *testing.T, ctx context.Context, ins []*Instance) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			api := client(ins[w%len(ins)])
			session := fmt.Sprintf("writer-%d", w)
			if errs[w] = api.ReportSession(ctx, workspace, session, "simulated", ""); errs[w] != nil {
				return
			}
			for i := range turnsPerWriter {
				if errs[w] = api.ReportSettledTurn(ctx, workspace, session, fmt.Sprintf("%s-t%d", session, i)); errs[w] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}
}

// checkComplete asserts a stream holds every writer's session and each of its turns exactly
// once, and no cursor twice.
func checkComplete(t *testing.T, name string, evs []Event) {
	t.Helper()
	cursors := map[string]bool{}
	turns := map[string]int{}
	sessions := map[string]int{}
	for _, ev := range evs {
		if cursors[ev.Cursor] {
			t.Fatalf("%s: cursor %s twice", name, ev.Cursor)
		}
		cursors[ev.Cursor] = true
		switch ev.Kind {
		case "TURN_UPSERTED":
			turns[deref(ev.TurnID)]++
		case "SESSION_UPSERTED":
			sessions[deref(ev.SessionID)]++
		}
	}
	for w := range writers {
		session := fmt.Sprintf("writer-%d", w)
		if sessions[session] != 1 {
			t.Errorf("%s: %d SESSION_UPSERTED events of %s, want 1", name, sessions[session], session)
		}
		for i := range turnsPerWriter {
			if id := fmt.Sprintf("%s-t%d", session, i); turns[id] != 1 {
				t.Errorf("%s: %d TURN_UPSERTED events of %s, want 1", name, turns[id], id)
			}
		}
	}
	if len(turns) != writers*turnsPerWriter {
		t.Errorf("%s: events of %d turns, want %d", name, len(turns), writers*turnsPerWriter)
	}
}

// sameEvents asserts got is want, event for event, and names the first difference.
func sameEvents(t *testing.T, name string, got, want []Event) {
	t.Helper()
	if slices.EqualFunc(got, want, sameEvent) {
		return
	}
	for i := range min(len(got), len(want)) {
		if !sameEvent(got[i], want[i]) {
			t.Fatalf("%s differs from the replay at event %d of %d/%d: got %v, want %v", name, i, len(got), len(want), got[i], want[i])
		}
	}
	t.Fatalf("%s has %d events, the replay %d (common prefix equal)", name, len(got), len(want))
}

func sameEvent(a, b Event) bool {
	return a.Cursor == b.Cursor && a.Kind == b.Kind && deref(a.SessionID) == deref(b.SessionID) &&
		deref(a.TurnID) == deref(b.TurnID) && deref(a.ForkOperationID) == deref(b.ForkOperationID) &&
		deref(a.ForkOperationPhase) == deref(b.ForkOperationPhase)
}
