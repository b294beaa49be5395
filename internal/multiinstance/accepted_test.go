package multiinstance

import (
	"context"
	"testing"
)

// TestTakeoverOfAcceptedFork: the provider accepts A's fork, but A cannot write the new session:
// the test holds a SHARE lock on the lineages table, so A's commit waits on its lineage row, and
// A's 1 s statement timeout turns each wait into a failed commit. The engine then records the
// acceptance alone, which leaves the operation provider_accepted (MATERIALIZING). A is killed
// there with SIGKILL, the lock goes away, and after the lease B commits the fork from what is
// recorded, without calling the provider again.
func TestTakeoverOfAcceptedFork(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a := c.startWith("a", "-db-statement-timeout", "1s")
	b := c.start("b")
	ctx := context.Background()
	onA, onB := client(a), client(b)
	if err := onA.ReportSource(ctx, workspace, "acc", "webhook", "", 2); err != nil {
		t.Fatal(err)
	}
	release, err := LockTable(ctx, c.db, "lineages", "SHARE")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	op, err := onA.Fork(ctx, workspace, "acc", "acc-t2", "accepted-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := onB.AwaitOperation(ctx, workspace, op.ID, streamIdle, func(o Operation) bool {
		return o.Phase == "MATERIALIZING" || o.Terminal()
	}); err != nil || got.Phase != "MATERIALIZING" {
		t.Fatalf("want the fork parked in MATERIALIZING behind the lock, got %+v (%v)", got, err)
	}
	a.Kill()
	if !a.Killed() {
		t.Fatal("A did not end by SIGKILL")
	}
	release()

	got, err := onB.AwaitOperation(ctx, workspace, op.ID, takeoverLimit, Operation.Terminal)
	if err != nil {
		t.Fatalf("accepted fork after A died: %v", err)
	}
	if got.Status != "COMMITTED" {
		t.Errorf("the accepted fork ended %+v, want COMMITTED", got)
	}
	if calls := c.adapter.ForkCallsOf(op.ID); len(calls) != 1 || calls[0].Instance != "a" {
		t.Errorf("/fork calls of the accepted fork: %+v, want exactly one, A's", calls)
	}
}
