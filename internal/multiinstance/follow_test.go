package multiinstance

import (
	"context"
	"slices"
	"testing"
	"time"
)

// workspace is the one workspace every test writes to (each test has a database of its own).
const workspace = "multi"

// streamIdle bounds the wait for any one message a test expects.
const streamIdle = 30 * time.Second

// everyPhase is what a subscriber that joins while an operation is FROZEN must see.
var everyPhase = []string{"FROZEN", "DISPATCHING", "MATERIALIZING", "COMMITTED"}

// TestForkFollowedOnAnotherInstance: a fork started on A, parked in FROZEN by the adapter, is
// followed by a forkOperationUpdated subscriber on B through every phase, in order, to COMMITTED,
// and C's workspaceEvents (subscribed before the fork) shows each of its transitions and the new
// session. The provider is called once. The instances poll the event log only once an hour, so
// B and C can only learn of A's commits through PostgreSQL's NOTIFY.
func TestForkFollowedOnAnotherInstance(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	noPoll := []string{"-event-poll", "1h"}
	a, b, cc := c.startWith("a", noPoll...), c.startWith("b", noPoll...), c.startWith("c", noPoll...)
	followFork(t, c, a, b, cc)
}

// TestForkFollowedSQLite is the same scenario on one SQLite instance (writer, follower and
// workspace subscriber alike): the behaviour the multi-instance test asks of every instance.
func TestForkFollowedSQLite(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newSQLiteCluster(t)
	a := c.start("a")
	followFork(t, c, a, a, a)
}

func followFork(t *testing.T, c *cluster, writer, follower, watcher *Instance) {
	ctx := context.Background()
	api := client(writer)
	if err := api.ReportSource(ctx, workspace, "src", "webhook", "", 2); err != nil {
		t.Fatal(err)
	}
	cursor, err := client(watcher).EventCursor(ctx, workspace)
	if err != nil {
		t.Fatal(err)
	}
	events, err := SubscribeEvents(ctx, watcher.WebsocketURL(), workspace, cursor)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()

	frozen := c.adapter.HoldDescribe(writer.Name, "src", 1)
	op, err := api.Fork(ctx, workspace, "src", "src-t2", "follow-1")
	if err != nil {
		t.Fatal(err)
	}
	awaitReached(t, frozen, "the describe before dispatch")
	follow, err := SubscribeOperation(ctx, follower.WebsocketURL(), workspace, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()
	first, err := follow.Next(ctx, streamIdle)
	if err != nil {
		t.Fatalf("first forkOperationUpdated message: %v", err)
	}
	frozen.Release()
	phases, err := FollowOperation(ctx, follow, streamIdle)
	phases = append(firstPhase(t, first), phases...)
	if err != nil {
		t.Fatalf("follow on %s: %v", follower.Name, err)
	}
	if !slices.Equal(phases, everyPhase) {
		t.Fatalf("subscriber on %s saw phases %v, want %v", follower.Name, phases, everyPhase)
	}

	committed, err := api.AwaitOperation(ctx, workspace, op.ID, streamIdle, Operation.Terminal)
	if err != nil || committed.Status != "COMMITTED" {
		t.Fatalf("operation %+v (%v), want COMMITTED", committed, err)
	}
	if logged := loggedPhases(t, events, committed); !slices.Equal(logged, everyPhase) {
		t.Fatalf("workspaceEvents on %s logged the operation's phases %v, want %v", watcher.Name, logged, everyPhase)
	}
	if calls := c.adapter.ForkCallsOf(op.ID); len(calls) != 1 || calls[0].Instance != writer.Name {
		t.Fatalf("provider /fork calls %+v, want exactly one, from %s", calls, writer.Name)
	}
}

// loggedPhases reads workspace events until both the operation's COMMITTED event and its new
// session's SESSION_UPSERTED have arrived, and returns the phases logged for the operation.
func loggedPhases(t *testing.T, events *Stream, op Operation) []string {
	t.Helper()
	var phases []string
	sawSession := false
	for range 100 {
		ev, err := events.NextEvent(context.Background(), streamIdle)
		if err != nil {
			t.Fatalf("workspaceEvents after phases %v (new session seen: %v): %v", phases, sawSession, err)
		}
		switch {
		case ev.Kind == "FORK_OPERATION_UPDATED" && deref(ev.ForkOperationID) == op.ID:
			phases = append(phases, deref(ev.ForkOperationPhase))
		case SessionUpserted(op.TargetSessionID)(ev):
			sawSession = true
		}
		if sawSession && slices.Contains(phases, "COMMITTED") {
			return phases
		}
	}
	t.Fatalf("100 workspace events without the commit: phases %v, new session seen: %v", phases, sawSession)
	return nil
}

// firstPhase decodes the first forkOperationUpdated message (the current state).
func firstPhase(t *testing.T, m Message) []string {
	t.Helper()
	var out struct{ ForkOperationUpdated OperationUpdate }
	if err := m.Decode(&out); err != nil {
		t.Fatalf("first forkOperationUpdated message: %v", err)
	}
	return []string{out.ForkOperationUpdated.Phase}
}

// awaitReached waits until the adapter holds a call, at most streamIdle.
func awaitReached(t *testing.T, h *Hold, what string) {
	t.Helper()
	select {
	case <-h.Reached():
	case <-time.After(streamIdle):
		t.Fatalf("the adapter never held %s within %s", what, streamIdle)
	}
}
