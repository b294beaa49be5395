package forkengine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Scenarios 17-20: the committed projection comes from the operation and its snapshot.
func TestCommittedResult(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.forkAndProcess("request-1", "turn-7")
		session, lineage, err := h.engine.CommittedResult(h.ctx, op)
		require.NoError(t, err)
		stored, err := h.store.GetSession(h.ctx, ws, op.TargetSessionID)
		require.NoError(t, err)
		require.Equal(t, stored, session)
		live, err := h.store.LineagesByTargetIDs(h.ctx, ws, []string{op.TargetSessionID})
		require.NoError(t, err)
		require.Equal(t, live[op.TargetSessionID], lineage)
	})
	t.Run("OKAfterTargetDeleted", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.forkAndProcess("request-1", "turn-7")
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, op.TargetSessionID, false))
		read, err := h.engine.Operation(h.ctx, ws, op.ID)
		require.NoError(t, err)
		session, lineage, err := h.engine.CommittedResult(h.ctx, read)
		require.NoError(t, err)
		require.Equal(t, op.TargetSessionID, session.ID)
		require.Nil(t, session.DeletedAt, "the projection is the session as committed")
		require.Equal(t, "conversations", session.RailSectionKey)
		require.Equal(t, op.ID, lineage.OperationID)
		require.Equal(t, op.TargetTurnID, lineage.TargetTurnID)
		require.Nil(t, read.AcknowledgedAt, "reading never acknowledges")
	})
	t.Run("ErrInconsistentLineage", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.forkAndProcess("request-1", "turn-7")
		other := op
		other.ID = "different-operation"
		_, _, err := h.engine.CommittedResult(h.ctx, other)
		requireCode(t, err, forkengine.CodeForkConflict, forkengine.ReasonInconsistentLineage)
		other = op
		other.TargetTurnID = "different-turn"
		_, _, err = h.engine.CommittedResult(h.ctx, other)
		requireCode(t, err, forkengine.CodeForkConflict, forkengine.ReasonInconsistentLineage)
	})
	t.Run("ErrNotCommitted", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-7")
		_, _, err := h.engine.CommittedResult(h.ctx, op)
		requireCode(t, err, forkengine.CodeForkConflict, "")
	})
}

// Scenario 31: reading a prepared or dispatching operation does nothing to it.
func TestOperationRead(t *testing.T) {
	t.Parallel()
	t.Run("OKPreparedUnchanged", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-7")
		describes := h.driver.DescribeCalls()
		read, err := h.engine.Operation(h.ctx, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, op, read)
		require.Equal(t, describes, h.driver.DescribeCalls())
		require.Equal(t, 0, h.driver.ForkCalls())
	})
	t.Run("OKDispatchingUnchanged", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-7")
		gate := make(chan struct{})
		h.driver.SetGate(gate)
		done := make(chan error, 1)
		go func() {
			_, err := h.engine.ProcessOperation(context.Background(), ws, op.ID)
			done <- err
		}()
		<-h.driver.ForkEntered()
		read, err := h.engine.Operation(h.ctx, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusDispatching, read.Status)
		processed, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusDispatching, processed.Status, "someone else is dispatching it")
		close(gate)
		require.NoError(t, <-done)
		require.Equal(t, 1, h.driver.ForkCalls())
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		h := newHarness(t)
		_, err := h.engine.Operation(h.ctx, ws, "missing")
		requireCode(t, err, forkengine.CodeNotFound, "")
		_, err = h.engine.ProcessOperation(h.ctx, ws, "missing")
		requireCode(t, err, forkengine.CodeNotFound, "")
	})
	t.Run("ErrOtherWorkspace", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-7")
		_, err := h.engine.Operation(h.ctx, "ws-2", op.ID)
		requireCode(t, err, forkengine.CodeNotFound, "")
	})
}

// A background start dispatches and commits on its own; Close waits for it.
func TestStartForkBackground(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBackground)
	h.seed(7)
	sub := h.broker.Subscribe(ws)
	defer sub.Close()
	op := h.mustFork("request-1", "turn-7")
	require.Equal(t, forkengine.StatusPrepared, op.Status)
	require.NoError(t, h.engine.Close(h.ctx))
	require.Equal(t, forkengine.StatusCommitted, h.stored(op.ID).Status)

	var statuses []forkengine.OperationStatus
	for len(statuses) < 4 {
		ev := <-sub.C()
		if ev.Kind == forkengine.EventForkOperationUpdated {
			statuses = append(statuses, ev.Status)
		}
	}
	require.Equal(t, []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching,
		forkengine.StatusProviderAccepted, forkengine.StatusCommitted}, statuses)
}

// After Close, started forks stay prepared for recovery instead of racing the shutdown.
func TestStartForkAfterCloseStaysPrepared(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBackground)
	h.seed(7)
	require.NoError(t, h.engine.Close(h.ctx))
	op := h.mustFork("request-1", "turn-7")
	require.Equal(t, forkengine.StatusPrepared, h.stored(op.ID).Status)
	require.Equal(t, 0, h.driver.ForkCalls())
}
