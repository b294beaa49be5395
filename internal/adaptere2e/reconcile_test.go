package adaptere2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/await"
)

// Deadlines. The kill must be what makes a fork unknown, so unknownWithin stays well under the
// engine's DispatchTimeout (30 s), and the server's webhook timeout is set far beyond both.
const (
	receivedWithin   = 30 * time.Second
	unknownWithin    = 15 * time.Second
	committedWithin  = 60 * time.Second
	backgroundWithin = 90 * time.Second // the engine's backoff, not the test, sets the pace here
)

// reconcileLease is the server's -fork-lease in TestKilledAdapterForksAreReconciledToCommitted.
// Its sweep, which makes the background reconcile attempt, comes every third of the lease: with
// the default 15 s the attempt due 2 s after the kill (forkengine.FirstReconcileDelay) waited for
// the sweep 5 s after the start. 3 s (multiinstance's testLease) still renews every second, so a
// loaded machine does not stall the live dispatch past its lease.
const reconcileLease = 3 * time.Second

// TestKilledAdapterForksAreReconciledToCommitted: two forks are in flight (the adapter has recorded
// each child and holds its answer) when the adapter is killed with SIGKILL; both end
// DELIVERY_UNKNOWN. The adapter starts again on the same state file and port: one fork is
// reconciled on demand (reconcileForkOperation), the other by the server in the background, both
// to COMMITTED with the child the adapter made, and the adapter received each fork exactly once.
func TestKilledAdapterForksAreReconciledToCommitted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	statePath := filepath.Join(dir, "adapter.json")
	adapter := start(t, "provider-adapter", adapterBin, "-addr", "127.0.0.1:0", "-state", statePath, "-fork-delay", "10m")
	server := start(t, "forkgraph", serverBin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "forkgraph.db"),
		"-no-seed", "-webhook-url", adapter.base, "-webhook-timeout", "10m", "-fork-lease", reconcileLease.String())
	requests := map[string]string{"on-demand": "req-kill-a", "background": "req-kill-b"}
	ops := map[string]string{}
	for name, requestID := range requests {
		source := "src-" + name
		turn := reportForkableSession(t, server.base, source)
		var started struct{ ForkSession operation }
		mustGQL(t, server.base, forkMutation, forkInput(source, turn, requestID), &started)
		ops[name] = started.ForkSession.ID
	}
	for name, requestID := range requests {
		await.State(t, receivedWithin, "the adapter to record the "+name+" fork", func() (bool, string) {
			rec := readAdapterState(t, statePath).Requests[workspace][requestID]
			return rec.Outcome == "forked", fmt.Sprintf("record %+v", rec)
		})
		if got := readOperation(t, server.base, ops[name]); got.Phase != "DISPATCHING" {
			t.Fatalf("%s fork is %s/%s while the adapter holds its answer, want DISPATCHING", name, got.Status, got.Phase)
		}
	}

	adapter.kill(t)
	for name, id := range ops {
		await.State(t, unknownWithin, "the "+name+" fork to become DELIVERY_UNKNOWN", func() (bool, string) {
			got := readOperation(t, server.base, id)
			return got.Status == "UNKNOWN" && got.Phase == "DELIVERY_UNKNOWN", fmt.Sprintf("%+v", got)
		})
	}

	startAdapterOn(t, adapter.addr, "-state", statePath)
	// Asked at once, so the mutation is exercised even if a background attempt comes first (then
	// it returns the operation as that attempt left it); asked again while still unknown.
	got := reconcileNow(t, server.base, ops["on-demand"], "COMMITTED")
	await.State(t, committedWithin, "the on-demand fork to commit", func() (bool, string) {
		if got.Status == "UNKNOWN" {
			got = reconcileNow(t, server.base, ops["on-demand"], "COMMITTED")
		}
		got = readOperation(t, server.base, ops["on-demand"])
		return got.Status == "COMMITTED", fmt.Sprintf("%+v", got)
	})
	await.State(t, backgroundWithin, "the background fork to commit without being asked", func() (bool, string) {
		got := readOperation(t, server.base, ops["background"])
		return got.Status == "COMMITTED", fmt.Sprintf("%+v", got)
	})

	st := readAdapterState(t, statePath)
	for name, requestID := range requests {
		got, rec := readOperation(t, server.base, ops[name]), st.Requests[workspace][requestID]
		if got.Phase != "COMMITTED" || got.Session == nil || got.Lineage == nil || got.Lineage.SourceSessionID != "src-"+name {
			t.Fatalf("%s fork committed as %+v, want its session and lineage", name, got)
		}
		if got.Session.ProviderSessionID != rec.ChildID || rec.ChildID == "" {
			t.Fatalf("%s fork's session has provider session %q, the adapter made %q", name, got.Session.ProviderSessionID, rec.ChildID)
		}
		if n := st.children(requestID); n != 1 || rec.ForkDeliveries != 1 || rec.Reconciles < 1 {
			t.Fatalf("%s: adapter has %d children, %d /fork deliveries, %d reconciles; want 1, 1 (never re-dispatched), >= 1",
				name, n, rec.ForkDeliveries, rec.Reconciles)
		}
		if seen := reconcileFields(t, server.base, ops[name]); seen.ReconcileAttempts < 1 || seen.LastReconciledAt == "" {
			t.Fatalf("%s fork shows %d reconcile attempts, last at %q; want at least 1, with a time", name,
				seen.ReconcileAttempts, seen.LastReconciledAt)
		}
	}
}

const operationQuery = `query($ws: ID!, $id: ID!) { forkOperation(workspaceId: $ws, id: $id) {
	id status phase error errorReason session { id providerSessionId } lineage { sourceSessionId } } }`

func readOperation(t *testing.T, base, id string) operation {
	t.Helper()
	var out struct{ ForkOperation *operation }
	mustGQL(t, base, operationQuery, map[string]any{"ws": workspace, "id": id}, &out)
	if out.ForkOperation == nil {
		t.Fatalf("operation %s not found", id)
	}
	return *out.ForkOperation
}

// reconcileFields reads how often, and when last, the operation was reconciled.
func reconcileFields(t *testing.T, base, id string) operation {
	t.Helper()
	var out struct{ ForkOperation operation }
	mustGQL(t, base, `query($ws: ID!, $id: ID!) { forkOperation(workspaceId: $ws, id: $id) {
		id reconcileAttempts lastReconciledAt } }`, map[string]any{"ws": workspace, "id": id}, &out)
	return out.ForkOperation
}

// reconcileNow asks the server for an attempt now and returns the operation it answers with:
// unknown still, or resolved to want (by this attempt or one before it). Any error fails the test.
func reconcileNow(t *testing.T, base, id, want string) operation {
	t.Helper()
	var out struct{ ReconcileForkOperation operation }
	mustGQL(t, base, `mutation($ws: ID!, $id: ID!) { reconcileForkOperation(workspaceId: $ws, id: $id) {
		id status phase reconcileAttempts } }`, map[string]any{"ws": workspace, "id": id}, &out)
	if got := out.ReconcileForkOperation; got.ID != id || (got.Status != "UNKNOWN" && got.Status != want) {
		t.Fatalf("reconcileForkOperation answered %+v, want operation %s, UNKNOWN or %s", got, id, want)
	}
	return out.ReconcileForkOperation
}
