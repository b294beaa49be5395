package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// twoInstances is two engines, each with its own connection pool, on one PostgreSQL schema:
// what two forkgraph processes are, minus HTTP. They share the scripted driver, so its call
// count is the provider's.
type twoInstances struct {
	engines []*forkengine.Engine
	dbs     []*DB
	driver  *forkenginetest.ScriptedDriver
	offset  atomic.Int64 // both engines' clocks run this far (ns) ahead of real time
}

func newTwoInstances(t *testing.T) *twoInstances {
	t.Helper()
	requirePostgres(t)
	cfg := postgresConfig(t)
	in := &twoInstances{driver: forkenginetest.NewScriptedDriver()}
	for _, id := range []string{"instance-a", "instance-b"} {
		db := openTest(t, cfg)
		e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": in.driver},
			InstanceID: id, Logger: quietLog, Clock: func() time.Time {
				return time.Now().Add(time.Duration(in.offset.Load())).UTC().Truncate(time.Microsecond)
			}})
		require.NoError(t, err)
		in.engines, in.dbs = append(in.engines, e), append(in.dbs, db)
	}
	return in
}

// close waits for both engines' background work.
func (in *twoInstances) close(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, e := range in.engines {
		require.NoError(t, e.Close(ctx))
	}
}

func (in *twoInstances) seedSource(t *testing.T, id string, turns int) {
	t.Helper()
	ctx := context.Background()
	psid, title := "provider-"+id, "Trip"
	_, err := in.engines[0].ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: id, Provider: "scripted",
		ProviderSessionID: &psid, Title: &title})
	require.NoError(t, err)
	for i := 1; i <= turns; i++ {
		ptid := fmt.Sprintf("provider-%s-t%d", id, i)
		_, err := in.engines[i%2].ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: id, ID: fmt.Sprintf("%s-t%d", id, i),
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid,
			ProviderTurnBinding: json.RawMessage(`{"v":1}`)})
		require.NoError(t, err)
	}
}

// together runs n calls of fn released at once, alternating between the instances.
func (in *twoInstances) together(n int, fn func(e *forkengine.Engine, i int)) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-release
			fn(in.engines[i%2], i)
		})
	}
	close(release)
	wg.Wait()
}

// With no global write lock, 200 identical fork requests spread over two instances still make one
// operation and one provider call, and new request ids on that boundary get it back (the barrier).
func TestIdenticalForksOverTwoInstancesMakeOneOperation(t *testing.T) {
	in := newTwoInstances(t)
	in.seedSource(t, "src", 2)
	ctx := context.Background()
	var mu sync.Mutex
	ids := map[string]int{}
	record := func(op forkengine.ForkOperation, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			ids["error: "+err.Error()]++
			return
		}
		ids[op.ID]++
	}
	in.together(200, func(e *forkengine.Engine, _ int) {
		record(e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t2", RequestID: "same"}))
	})
	require.Len(t, ids, 1, "one operation, no errors: %v", ids)
	in.together(100, func(e *forkengine.Engine, i int) {
		record(e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t2",
			RequestID: fmt.Sprintf("other-%d", i)}))
	})
	require.Len(t, ids, 1, "the barrier answers every new request id with the same operation: %v", ids)
	in.close(t)
	require.Equal(t, 1, in.driver.ForkCalls())
	n, err := in.dbs[0].CountOperations(ctx, "w", forkengine.OperationFilter{})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	for id := range ids {
		op, err := in.dbs[1].GetOperation(ctx, "w", id)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status)
	}
}

// Writes that read, decide and write (turn sequences, fork titles) stay exact when two instances
// make them at once: Tx.Lock keeps them apart where the global lock used to.
func TestConcurrentWritesOverTwoInstancesStayExact(t *testing.T) {
	in := newTwoInstances(t)
	in.seedSource(t, "src", 8)
	ctx := context.Background()
	in.together(4*30, func(e *forkengine.Engine, i int) {
		session := fmt.Sprintf("s%d", i%4)
		_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: session, Provider: "scripted"})
		require.NoError(t, err)
		_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: session, ID: fmt.Sprintf("%s-turn-%d", session, i),
			Phase: forkengine.PhaseRunning})
		require.NoError(t, err)
	})
	for s := range 4 {
		turns, err := in.dbs[0].TurnsThrough(ctx, "w", fmt.Sprintf("s%d", s), 1<<40)
		require.NoError(t, err)
		require.Len(t, turns, 30)
		for i, turn := range turns {
			require.Equal(t, int64(i+1), turn.Sequence, "sequences are dense per session")
		}
	}
	// Forks of two sessions of one family (the root and a fork of it) take different source
	// locks; only the family's lock keeps their numbers apart.
	first, err := in.engines[0].StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t8", RequestID: "first"})
	require.NoError(t, err)
	require.Equal(t, "Trip (2)", first.TargetTitle)
	require.Eventually(t, func() bool {
		op, err := in.dbs[0].GetOperation(ctx, "w", first.ID)
		return err == nil && op.Status == forkengine.StatusCommitted
	}, 30*time.Second, 10*time.Millisecond)
	childTurns, err := in.dbs[0].TurnsThrough(ctx, "w", first.TargetSessionID, 1<<40)
	require.NoError(t, err)
	require.Len(t, childTurns, 8)
	titles := map[string]bool{}
	var mu sync.Mutex
	in.together(8, func(e *forkengine.Engine, i int) {
		input := forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: fmt.Sprintf("src-t%d", i+1),
			RequestID: fmt.Sprintf("fork-%d", i)}
		if i%2 == 1 {
			input.SourceSessionID, input.ThroughTurnID = first.TargetSessionID, childTurns[i].ID
		}
		op, err := e.StartFork(ctx, input)
		require.NoError(t, err)
		mu.Lock()
		titles[op.TargetTitle] = true
		mu.Unlock()
	})
	in.close(t)
	require.Len(t, titles, 8, "every fork of the family got its own number: %v", titles)
	for n := 3; n <= 10; n++ {
		require.True(t, titles[fmt.Sprintf("Trip (%d)", n)], "title Trip (%d) in %v", n, titles)
	}
}

// The instance whose dispatch ended unknown reconciles it when it is due; another instance leaves
// it alone while that lease is live, and takes the schedule over once it has expired (its holder
// died).
func TestTheLeaseHolderReconcilesOnPostgres(t *testing.T) {
	in := newTwoInstances(t)
	in.seedSource(t, "src", 2)
	ctx := context.Background()
	desc := forkenginetest.ScriptedDescriptor
	desc.Reconcile = true
	in.driver.SetDescriptor(desc, nil)
	in.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown}},
		forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown}})
	a, b := in.engines[0], in.engines[1]
	unknown := func(request, turn string) forkengine.ForkOperation {
		op, err := a.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: turn, RequestID: request})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			got, err := in.dbs[0].GetOperation(ctx, "w", op.ID)
			op = got
			return err == nil && got.Status == forkengine.StatusUnknown
		}, 30*time.Second, 10*time.Millisecond)
		return op
	}
	first, second := unknown("first", "src-t1"), unknown("second", "src-t2")
	found := func(op forkengine.ForkOperation) {
		in.driver.QueueReconcile(forkenginetest.ReconcileStep{Result: forkenginetest.FoundResult(
			forkengine.ReconcileRequest{ForkRequest: forkengine.ForkRequest{OperationID: op.ID, Descriptor: desc}})})
	}
	sweep := func(e *forkengine.Engine) forkengine.RecoveryReport {
		report, err := e.TakeOver(ctx)
		require.NoError(t, err)
		return report
	}
	in.offset.Store(int64(3 * time.Second)) // both first attempts are due; A's leases are live
	require.Zero(t, sweep(b).Scanned, "B leaves what A holds")
	got, err := b.ReconcileForkOperation(ctx, "w", first.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusUnknown, got.Status, "an on-demand attempt on B waits for A's lease")
	require.Zero(t, in.driver.ReconcileCalls())

	found(first)
	op, err := a.ReconcileForkOperation(ctx, "w", first.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, "A, the holder, reconciles")

	in.offset.Store(int64(forkengine.DefaultLeaseDuration + 5*time.Second)) // A is gone; its lease expired
	found(second)
	require.Equal(t, 1, sweep(b).Scanned)
	in.close(t)
	op, err = in.dbs[1].GetOperation(ctx, "w", second.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, "B took the schedule over")
	require.Equal(t, "instance-b", op.LeaseOwner)
	require.Equal(t, 2, in.driver.ForkCalls(), "reconciliation never forks")
	require.Equal(t, 2, in.driver.ReconcileCalls())
}
