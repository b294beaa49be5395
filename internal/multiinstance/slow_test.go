package multiinstance

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestSlowForkSurvivesAPeerStarting: two forks are dispatching on A, one held at the adapter
// and one slow by its simulated script, when B starts. B's start-up must leave A's live work
// alone (it used to turn every dispatching fork into DELIVERY_UNKNOWN). The held fork then
// stays DISPATCHING for three leases while A keeps renewing its lease, and both end COMMITTED
// with one provider call each.
func TestSlowForkSurvivesAPeerStarting(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a := c.start("a")
	ctx := context.Background()
	onA := client(a)
	slowFor := 4 * testLease
	if err := onA.ReportSource(ctx, workspace, "held", "webhook", "", 2); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`{"simulated":{"latencyMs":%d}}`, slowFor.Milliseconds())
	if err := onA.ReportSource(ctx, workspace, "slow", "simulated", script, 2); err != nil {
		t.Fatal(err)
	}
	hold := c.adapter.HoldFork("a", "held")
	held, err := onA.Fork(ctx, workspace, "held", "held-t2", "slow-held")
	if err != nil {
		t.Fatal(err)
	}
	slow, err := onA.Fork(ctx, workspace, "slow", "slow-t2", "slow-simulated")
	if err != nil {
		t.Fatal(err)
	}
	awaitReached(t, hold, "A's /fork of the held fork")
	if _, err := onA.AwaitOperation(ctx, workspace, slow.ID, streamIdle, func(o Operation) bool {
		return o.Phase != "FROZEN"
	}); err != nil {
		t.Fatal(err)
	}
	expectPhase(t, onA, slow.ID, "DISPATCHING") // still: it takes slowFor

	b := c.start("b")
	onB := client(b)
	expectPhase(t, onB, held.ID, "DISPATCHING")
	// Three leases go by with the call still held: A must renew its lease, and B must not take
	// the operation. This wait is the scenario (time passing), not a synchronisation.
	for i, until := 0, time.Now().Add(3*testLease); i < maxPolls && time.Now().Before(until); i++ {
		expectPhase(t, onB, held.ID, "DISPATCHING")
		time.Sleep(100 * time.Millisecond)
	}
	hold.Release()

	for _, op := range []Operation{held, slow} {
		got, err := onB.AwaitOperation(ctx, workspace, op.ID, streamIdle+slowFor, Operation.Terminal)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != "COMMITTED" {
			t.Errorf("fork %s (%s) ended %+v, want COMMITTED", op.ID, op.RequestID, got)
		}
	}
	if calls := c.adapter.ForkCallsOf(held.ID); len(calls) != 1 || calls[0].Instance != "a" {
		t.Errorf("/fork calls of the held fork: %+v, want exactly one, from a", calls)
	}
}
