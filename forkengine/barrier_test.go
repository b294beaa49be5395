package forkengine_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// Scenario 24: a transport failure is unknown and never dispatched again, by a replay or (barrier
// on) by a new request on the same turn.
func TestBarrierUnknownNeverRedispatched(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(7)
	h.driver.QueueFork(forkenginetest.ForkStep{Err: errors.New("connection lost")})
	op := h.forkAndProcess("request-1", "turn-7")
	require.Equal(t, forkengine.StatusUnknown, op.Status)

	replay := h.process(h.mustFork("request-1", "turn-7"))
	require.Equal(t, op, replay)
	other := h.process(h.mustFork("request-2", "turn-7"))
	require.Equal(t, op, other, "the new request gets the original operation, request and target")
	require.Equal(t, 1, h.driver.ForkCalls())
	require.Equal(t, 1, h.operations())

	_, err := h.engine.Acknowledge(h.ctx, ws, op.ID, "")
	requireCode(t, err, forkengine.CodeAcknowledgeConflict, "")
}

// Scenario 25: a committed fork whose response was lost answers a new request until it is
// acknowledged; after that a new request makes a new fork.
func TestBarrierCommittedUntilAcknowledged(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(7)
	op := h.forkAndProcess("request-1", "turn-7")
	require.Equal(t, forkengine.StatusCommitted, op.Status)

	retry := h.mustFork("request-2", "turn-7")
	require.Equal(t, op, retry)
	session, _, err := h.engine.CommittedResult(h.ctx, retry)
	require.NoError(t, err)
	require.Equal(t, op.TargetSessionID, session.ID)
	require.Equal(t, 1, h.driver.ForkCalls())

	acked, err := h.engine.Acknowledge(h.ctx, ws, op.ID, "")
	require.NoError(t, err)
	fresh := h.forkAndProcess("request-3", "turn-7")
	require.NotEqual(t, acked.ID, fresh.ID)
	require.Equal(t, forkengine.StatusCommitted, fresh.Status)
	require.Equal(t, "123 (3)", fresh.TargetTitle)
	require.Equal(t, 2, h.driver.ForkCalls())
}

// An active operation answers a new request on its turn; other turns of the source are free.
func TestBarrierActiveOperation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(7)
	op := h.mustFork("request-1", "turn-7")
	require.Equal(t, op, h.mustFork("request-2", "turn-7"))
	other := h.mustFork("request-3", "turn-6")
	require.NotEqual(t, op.ID, other.ID, "forks of different turns run side by side")
	require.Equal(t, 2, h.operations())
}

// Scenario 54: failure releases the boundary at once.
func TestBarrierFailedReleases(t *testing.T) {
	t.Parallel()
	for _, barrierOff := range []bool{false, true} {
		name := "BarrierOn"
		if barrierOff {
			name = "BarrierOff"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(cfg *forkengine.Config) { cfg.DisableBarrier = barrierOff })
			h.seed(7)
			h.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionRejected}})
			failed := h.forkAndProcess("request-1", "turn-7")
			require.Equal(t, forkengine.StatusFailed, failed.Status)
			fresh := h.forkAndProcess("request-2", "turn-7")
			require.NotEqual(t, failed.ID, fresh.ID)
			require.Equal(t, forkengine.StatusCommitted, fresh.Status)
			require.Equal(t, "123 (2)", fresh.TargetTitle, "a failed fork does not count")
			_, err := h.engine.Acknowledge(h.ctx, ws, failed.ID, "")
			requireCode(t, err, forkengine.CodeAcknowledgeConflict, "")
		})
	}
}

// With the barrier off only an active operation blocks: unknown and unacknowledged committed
// operations let a new request fork again (reference §3.10, optimistic contract).
func TestBarrierOff(t *testing.T) {
	t.Parallel()
	t.Run("ErrForkInProgress", func(t *testing.T) {
		h := newHarness(t, withoutBarrier)
		h.seed(7)
		h.mustFork("request-1", "turn-7")
		_, err := h.fork("request-2", "turn-7")
		requireCode(t, err, forkengine.CodeForkInProgress, "")
		var domain *forkengine.Error
		require.ErrorAs(t, err, &domain)
		require.True(t, domain.Retryable)
		require.Equal(t, 1, h.operations())
	})
	t.Run("OKAfterUnknown", func(t *testing.T) {
		h := newHarness(t, withoutBarrier)
		h.seed(7)
		h.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown}})
		unknown := h.forkAndProcess("request-1", "turn-7")
		require.Equal(t, forkengine.StatusUnknown, unknown.Status)
		fresh := h.forkAndProcess("request-2", "turn-7")
		require.Equal(t, forkengine.StatusCommitted, fresh.Status)
		require.Equal(t, "123 (3)", fresh.TargetTitle, "an unknown fork may exist, so it counts")
		require.Equal(t, 2, h.driver.ForkCalls())
	})
	t.Run("OKCommittedUnacknowledged", func(t *testing.T) {
		h := newHarness(t, withoutBarrier)
		h.seed(7)
		first := h.forkAndProcess("request-1", "turn-7")
		second := h.forkAndProcess("request-2", "turn-7")
		require.NotEqual(t, first.ID, second.ID)
		require.Equal(t, forkengine.StatusCommitted, second.Status)
		require.Equal(t, 2, h.driver.ForkCalls())
	})
}

// Scenario 44: acknowledge is idempotent and keeps the first timestamp.
func TestAcknowledge(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.forkAndProcess("request-1", "turn-7")
		sub := h.broker.Subscribe(ws)
		defer sub.Close()
		first, err := h.engine.Acknowledge(h.ctx, ws, op.ID, "")
		require.NoError(t, err)
		require.NotNil(t, first.AcknowledgedAt)
		require.Equal(t, forkengine.StatusCommitted, first.Status)
		ev := <-sub.C()
		require.Equal(t, forkengine.EventForkOperationUpdated, ev.Kind)
		require.Equal(t, op.ID, ev.OperationID)

		second, err := h.engine.Acknowledge(h.ctx, ws, op.ID, "")
		require.NoError(t, err)
		require.Equal(t, first, second)
		require.Empty(t, sub.C(), "a repeated acknowledgement emits nothing")
		require.Equal(t, first, h.stored(op.ID))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		h := newHarness(t)
		_, err := h.engine.Acknowledge(h.ctx, ws, "missing", "")
		requireCode(t, err, forkengine.CodeNotFound, "")
	})
	t.Run("ErrNotCommitted", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-7")
		_, err := h.engine.Acknowledge(h.ctx, ws, op.ID, "")
		requireCode(t, err, forkengine.CodeAcknowledgeConflict, "")
		require.Nil(t, h.stored(op.ID).AcknowledgedAt)
	})
}
