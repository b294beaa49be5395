package multiinstance

import (
	"context"
	"testing"
	"time"
)

// takeoverLimit bounds the wait for a takeover: the lease, then B's next scan, with room for a
// loaded machine.
const takeoverLimit = testLease + 45*time.Second

// TestTakeoverAfterKill: A holds one fork in prepared (its describe before dispatch is held) and
// one in dispatching (its /fork call is held), and is killed with SIGKILL. After the lease, B
// takes both over by SPEC §2.7: the prepared one is dispatched (by B, the one /fork call it ever
// gets) and commits; the dispatching one becomes DELIVERY_UNKNOWN without another call, since
// A's call may have reached the provider.
func TestTakeoverAfterKill(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a, b := c.start("a"), c.start("b")
	takeover(t, c, a, func() *Instance { return b })
}

// TestRestartAfterKillSQLite is the same on one SQLite file: the instance that takes over is a
// new process started after the kill (SQLite allows one at a time).
func TestRestartAfterKillSQLite(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newSQLiteCluster(t)
	a := c.start("a")
	takeover(t, c, a, func() *Instance { return c.start("b") })
}

// TestRestartWithSameIDTakesItsOwnForks: with a lease far longer than the test may wait, A is
// killed and started again under its own id; it takes its unfinished forks back at start-up (a
// restart with a fixed id does not wait out its own leases), while B, also running, leaves them
// alone. The provider rules are the same as for any takeover.
func TestRestartWithSameIDTakesItsOwnForks(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	long := []string{"-fork-lease", (3 * takeoverLimit).String()}
	a := c.startWith("a", long...)
	c.startWith("b", long...)
	takeover(t, c, a, func() *Instance { return c.startWith("a", long...) })
}

// takeover parks the forks on a, kills it, and expects the instance next returns (running
// already, or started then) to finish them.
func takeover(t *testing.T, c *cluster, a *Instance, next func() *Instance) {
	ctx := context.Background()
	onA := client(a)
	for _, s := range []string{"prep", "disp"} {
		if err := onA.ReportSource(ctx, workspace, s, "webhook", "", 2); err != nil {
			t.Fatal(err)
		}
	}
	prepHold := c.adapter.HoldDescribe("a", "prep", 1)
	dispHold := c.adapter.HoldFork("a", "disp")
	prep, err := onA.Fork(ctx, workspace, "prep", "prep-t2", "takeover-prep")
	if err != nil {
		t.Fatal(err)
	}
	disp, err := onA.Fork(ctx, workspace, "disp", "disp-t2", "takeover-disp")
	if err != nil {
		t.Fatal(err)
	}
	awaitReached(t, prepHold, "A's describe before dispatching the prepared fork")
	awaitReached(t, dispHold, "A's /fork of the dispatching fork")
	expectPhase(t, onA, prep.ID, "FROZEN")
	expectPhase(t, onA, disp.ID, "DISPATCHING")

	a.Kill()
	if !a.Killed() {
		t.Fatal("A did not end by SIGKILL")
	}
	// A's held calls died with its connections; nothing of A's is waiting any more.
	prepHold.Release()
	dispHold.Release()
	b := next()
	onB := client(b)

	gotPrep, err := onB.AwaitOperation(ctx, workspace, prep.ID, takeoverLimit, Operation.Terminal)
	if err != nil {
		t.Fatalf("prepared fork after A died: %v", err)
	}
	gotDisp, err := onB.AwaitOperation(ctx, workspace, disp.ID, takeoverLimit, Operation.Terminal)
	if err != nil {
		t.Fatalf("dispatching fork after A died: %v", err)
	}
	if gotPrep.Status != "COMMITTED" {
		t.Errorf("the prepared fork ended %+v, want COMMITTED (dispatched by B)", gotPrep)
	}
	if gotDisp.Status != "UNKNOWN" || gotDisp.Phase != "DELIVERY_UNKNOWN" {
		t.Errorf("the dispatching fork ended %+v, want UNKNOWN / DELIVERY_UNKNOWN", gotDisp)
	}
	if calls := c.adapter.ForkCallsOf(prep.ID); len(calls) != 1 || calls[0].Instance != b.Name {
		t.Errorf("/fork calls of the prepared fork: %+v, want exactly one, from %s", calls, b.Name)
	}
	if calls := c.adapter.ForkCallsOf(disp.ID); len(calls) != 1 || calls[0].Instance != "a" {
		t.Errorf("/fork calls of the dispatching fork: %+v, want exactly one, A's before it died", calls)
	}
	if !c.postgres() || b.Name == a.Name {
		return // one process per SQLite file: b holds it; or a was restarted already
	}
	// A restarted instance finds nothing left to do and calls nobody.
	before := len(c.adapter.ForkCalls())
	again := c.start("a2")
	if _, _, err := client(again).Operation(ctx, workspace, prep.ID); err != nil {
		t.Fatal(err)
	}
	if after := len(c.adapter.ForkCalls()); after != before {
		t.Errorf("a new instance made %d more /fork calls, want none: %+v", after-before, c.adapter.ForkCalls())
	}
}

// expectPhase asserts the operation's current phase as read through api.
func expectPhase(t *testing.T, api *Client, id, phase string) {
	t.Helper()
	op, found, err := api.Operation(context.Background(), workspace, id)
	if err != nil || !found || op.Phase != phase {
		t.Fatalf("operation %s is %+v (found %v, %v), want phase %s", id, op, found, err, phase)
	}
}
