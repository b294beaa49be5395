package multiinstance

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestDatabaseConnectionsDropped: every database connection of both instances (their pools and
// their LISTEN connections) is terminated mid-stream, as a database restart would. Writes
// through A fail for a moment and are retried (they are idempotent); B's subscriber, which
// followed from the start, must still receive exactly the replay of the log, and a fork started
// on A afterwards must be followed to COMMITTED on B.
func TestDatabaseConnectionsDropped(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a, b := c.start("a"), c.start("b")
	ctx := context.Background()
	onA := client(a)
	start, err := client(b).EventCursor(ctx, workspace)
	if err != nil {
		t.Fatal(err)
	}
	live, err := SubscribeEvents(ctx, b.WebsocketURL(), workspace, start)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := retried(func() error { return writeTurns(ctx, onA, "dropped", 0, 50) }); err != nil {
		t.Fatal(err)
	}
	ended, err := DropConnections(ctx, c.db)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("terminated %d connections of the two instances", ended)
	if ended < 2 {
		t.Fatalf("terminated %d connections, want at least each instance's LISTEN connection", ended)
	}
	if err := retried(func() error { return writeTurns(ctx, onA, "dropped", 50, 100) }); err != nil {
		t.Fatal(err)
	}
	if err := retried(func() error { return onA.ReportSource(ctx, workspace, "after", "simulated", "", 1) }); err != nil {
		t.Fatal(err)
	}
	op, err := onA.Fork(ctx, workspace, "after", "after-t1", "after-drop")
	if err != nil {
		t.Fatal(err)
	}
	follow, err := SubscribeOperation(ctx, b.WebsocketURL(), workspace, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer follow.Close()
	phases, err := FollowOperation(ctx, follow, streamIdle)
	if err != nil || len(phases) == 0 || phases[len(phases)-1] != "COMMITTED" {
		t.Fatalf("following the fork on B after the drop: phases %v (%v), want them to end COMMITTED", phases, err)
	}
	if err := onA.ReportSession(ctx, workspace, "end", "simulated", ""); err != nil {
		t.Fatal(err)
	}
	got, err := live.EventsUntil(ctx, maxEvents, streamIdle, SessionUpserted("end"))
	if err != nil {
		t.Fatalf("B's subscriber across the drop: %v", err)
	}
	replay := &Follower{Workspace: workspace, After: start}
	if err := replay.Follow(ctx, a.WebsocketURL(), maxEvents, streamIdle, SessionUpserted("end")); err != nil {
		t.Fatalf("replay on A: %v", err)
	}
	sameEvents(t, "B's subscriber across the drop", got, replay.Events)
}

// retried runs an idempotent write up to 20 times, 100 ms apart, while the instance reconnects
// to the database.
func retried(write func() error) error {
	var err error
	for range 20 {
		if err = write(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // an external recovery: retried, bounded in count
	}
	return fmt.Errorf("still failing after 20 attempts: %w", err)
}
