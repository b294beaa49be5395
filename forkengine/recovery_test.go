package forkengine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// putOperation writes an operation in a given status straight to the store, as a crashed process
// would have left it.
func putOperation(t *testing.T, h *harness, op forkengine.ForkOperation, status forkengine.OperationStatus) forkengine.ForkOperation {
	t.Helper()
	op.Status = status
	require.NoError(t, h.store.Update(h.ctx, func(tx forkengine.Tx) error {
		_, err := tx.UpdateOperation(h.ctx, op, forkengine.StatusPrepared)
		return err
	}))
	return h.stored(op.ID)
}

// Scenarios 23, 32 and SPEC §2.7: recovery never sends a fork twice.
func TestRecover(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(4)
	prepared := h.mustFork("request-prepared", "turn-1")
	dispatching := putOperation(t, h, h.mustFork("request-dispatching", "turn-2"), forkengine.StatusDispatching)
	accepted := h.mustFork("request-accepted", "turn-3")
	accepted.TargetProviderSessionID = "child-accepted"
	accepted.StateBindingMode = forkengine.BindingHostCopy
	accepted = putOperation(t, h, accepted, forkengine.StatusProviderAccepted)
	h.driver.QueueFork() // default acceptance for the one prepared operation

	report, err := h.engine.Recover(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{Scanned: 3, Unknown: 1, Committed: 2}, report)

	require.Equal(t, forkengine.StatusCommitted, h.stored(prepared.ID).Status)
	unknown := h.stored(dispatching.ID)
	require.Equal(t, forkengine.StatusUnknown, unknown.Status)
	require.Equal(t, "provider fork delivery is unknown after restart", unknown.Error)
	require.NotNil(t, unknown.CompletedAt)
	committed := h.stored(accepted.ID)
	require.Equal(t, forkengine.StatusCommitted, committed.Status)
	target, err := h.store.GetSession(h.ctx, ws, committed.TargetSessionID)
	require.NoError(t, err)
	require.Equal(t, "child-accepted", target.ProviderSessionID)

	require.Equal(t, 1, h.driver.ForkCalls(), "only the prepared operation reaches the driver")
	require.Equal(t, prepared.ID, h.driver.ForkRequests()[0].OperationID)

	again, err := h.engine.Recover(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{}, again, "nothing is left to recover")
	require.Equal(t, 1, h.driver.ForkCalls())
}

// Scenario 33 (adapted): a prepared operation whose driver no longer resolves fails without a
// Fork call; failing is an outcome, not a recovery error.
func TestRecoverPreparedWithoutDriverFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	op := h.mustFork("request-1", "turn-1")
	h.driver.SetDescriptor(forkengine.Descriptor{}, errors.New("runtime cannot be resolved"))
	describes := h.driver.DescribeCalls()
	report, err := h.engine.Recover(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{Scanned: 1, Failed: 1}, report)
	require.Equal(t, forkengine.StatusFailed, h.stored(op.ID).Status)
	require.Equal(t, 1, h.driver.DescribeCalls()-describes)
	require.Equal(t, 0, h.driver.ForkCalls())
}

// A store failure while recovering one operation is collected; the others still recover.
func TestRecoverCollectsErrors(t *testing.T) {
	t.Parallel()
	flaky := &flakyStore{MemStore: forkengineMemStore()}
	h := newHarness(t, func(cfg *forkengine.Config) { cfg.Store = flaky })
	h.store = flaky.MemStore
	h.seed(2)
	first := h.mustFork("request-1", "turn-1")
	second := h.mustFork("request-2", "turn-2")
	flaky.failLineageWrites.Store(2) // the first fork's commit beside the acceptance and its retry
	report, err := h.engine.Recover(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 2, report.Scanned)
	require.Equal(t, 1, report.Committed)
	require.Len(t, report.Errors, 1)
	require.ErrorIs(t, report.Errors[0], errDiskFull)
	require.Equal(t, forkengine.StatusProviderAccepted, h.stored(first.ID).Status)
	require.Equal(t, forkengine.StatusCommitted, h.stored(second.ID).Status)
}

// Scenario 34: recovery pages through every operation with a stable cursor.
func TestRecoverPages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pageSize, pages int }{{0, 3}, {7, 30}} {
		t.Run(fmt.Sprintf("PageSize%d", tc.pageSize), func(t *testing.T) {
			t.Parallel()
			paging := &pagingStore{MemStore: forkengineMemStore()}
			h := newHarness(t, func(cfg *forkengine.Config) {
				cfg.RecoveryPageSize = tc.pageSize
				cfg.Store = paging
			})
			h.store = paging.MemStore
			var ids []string
			for i := range 205 {
				// One source each keeps the fixture linear: snapshots and families stay small.
				id := fmt.Sprintf("source-%03d", i)
				h.session(id, "provider-"+id, id)
				h.turn(id, "turn-of-"+id, forkengine.PhaseSettled)
				op, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: id,
					ThroughTurnID: "turn-of-" + id, RequestID: "request-" + id})
				require.NoError(t, err)
				ids = append(ids, putOperation(t, h, op, forkengine.StatusDispatching).ID)
			}
			report, err := h.engine.Recover(h.ctx)
			require.NoError(t, err)
			require.Equal(t, forkengine.RecoveryReport{Scanned: 205, Unknown: 205}, report)
			require.Len(t, paging.cursors, tc.pages)
			for i := 1; i < len(paging.cursors); i++ {
				prev, next := paging.cursors[i-1], paging.cursors[i]
				require.True(t, next.Time.After(prev.Time) || (next.Time.Equal(prev.Time) && next.ID > prev.ID),
					"the cursor moves forward: %v then %v", prev, next)
			}
			for _, id := range ids {
				require.Equal(t, forkengine.StatusUnknown, h.stored(id).Status)
			}
			require.Equal(t, 0, h.driver.ForkCalls())
		})
	}
}

func TestRecoverStopsWhenContextEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	h.mustFork("request-1", "turn-1")
	ctx, cancel := context.WithCancel(h.ctx)
	cancel()
	_, err := h.engine.Recover(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 0, h.driver.ForkCalls())
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	_, err := forkengine.New(forkengine.Config{})
	require.Error(t, err)
	_, err = forkengine.New(forkengine.Config{Store: forkengineMemStore(), RecoveryPageSize: 1001})
	require.Error(t, err)
	e, err := forkengine.New(forkengine.Config{Store: forkengineMemStore(), DispatchTimeout: -time.Second})
	require.NoError(t, err, "defaults fill the rest")
	require.NotNil(t, e.Reader())
}

// pagingStore records the cursor of every recovery claim.
type pagingStore struct {
	*forkenginetest.MemStore
	cursors []forkengine.PageCursor
}

func (s *pagingStore) ClaimOperations(ctx context.Context, c forkengine.LeaseClaim) ([]forkengine.ForkOperation, error) {
	s.cursors = append(s.cursors, c.After)
	return s.MemStore.ClaimOperations(ctx, c)
}

// StartRecovery turns leftovers from dispatching into unknown before it returns, and resumes the
// rest in the background, so a server can listen while a slow provider answers.
func TestStartRecoveryResumesInTheBackground(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(3)
	prepared := h.mustFork("request-prepared", "turn-1")
	dispatching := putOperation(t, h, h.mustFork("request-dispatching", "turn-2"), forkengine.StatusDispatching)
	gate := make(chan struct{})
	h.driver.SetGate(gate)
	h.driver.QueueFork()

	report, err := h.engine.StartRecovery(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{Scanned: 2, Unknown: 1, Resumed: 1}, report)
	require.Equal(t, forkengine.StatusUnknown, h.stored(dispatching.ID).Status, "settled before returning")

	var entered forkengine.ForkRequest
	select {
	case entered = <-h.driver.ForkEntered(): // the provider is still answering; StartRecovery has returned
	case <-time.After(10 * time.Second):
		t.Fatal("the prepared operation was never dispatched in the background")
	}
	require.Equal(t, prepared.ID, entered.OperationID)
	close(gate)
	require.NoError(t, h.engine.Close(h.ctx))
	require.Equal(t, forkengine.StatusCommitted, h.stored(prepared.ID).Status)
	require.Equal(t, 1, h.driver.ForkCalls())
}
