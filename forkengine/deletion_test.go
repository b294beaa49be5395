package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

func TestDeleteSession(t *testing.T) {
	t.Parallel()
	t.Run("OKSoftDeleteKeepsOperations", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		op := h.forkAndProcess("request-1", "turn-2")
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, source, false))
		s, err := h.store.GetSession(h.ctx, ws, source)
		require.NoError(t, err)
		require.NotNil(t, s.DeletedAt)
		require.Equal(t, op, h.stored(op.ID))
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, source, false), "deleting twice is a no-op")
	})
	t.Run("OKReportRestores", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, source, false))
		s := h.session(source, "provider-session-1", "123")
		require.Nil(t, s.DeletedAt)
	})
	// Scenario 45: purging the target removes its operation and lineage and frees the id.
	t.Run("OKPurgeTargetFreesTheID", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		op := h.forkAndProcess("request-1", "turn-2")
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, op.TargetSessionID, true))
		_, err := h.engine.Operation(h.ctx, ws, op.ID)
		requireCode(t, err, forkengine.CodeNotFound, "")
		lineages, err := h.store.LineagesByTargetIDs(h.ctx, ws, []string{op.TargetSessionID})
		require.NoError(t, err)
		require.Empty(t, lineages)
		h.session(op.TargetSessionID, "provider-session-new", "reused")
	})
	// Scenario 46: purging the source removes its operations; the target survives without lineage.
	t.Run("OKPurgeSourceKeepsTarget", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		op := h.forkAndProcess("request-1", "turn-2")
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, source, true))
		require.Equal(t, 0, h.operations())
		target, err := h.store.GetSession(h.ctx, ws, op.TargetSessionID)
		require.NoError(t, err)
		lineages, err := h.store.LineagesByTargetIDs(h.ctx, ws, []string{target.ID})
		require.NoError(t, err)
		require.Empty(t, lineages)
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, target.ID, false))
		require.Nil(t, h.session(target.ID, target.ProviderSessionID, target.Title).DeletedAt)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		h := newHarness(t)
		requireCode(t, h.engine.DeleteSession(h.ctx, ws, "missing", false), forkengine.CodeNotFound, "")
		requireCode(t, h.engine.DeleteSession(h.ctx, ws, "missing", true), forkengine.CodeNotFound, "")
	})
	// Scenario 53: during a fork, the source and the reserved target cannot be deleted.
	t.Run("ErrSourceHasActiveFork", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		h.mustFork("request-1", "turn-2")
		for _, purge := range []bool{false, true} {
			err := h.engine.DeleteSession(h.ctx, ws, source, purge)
			requireCode(t, err, forkengine.CodeForkInProgress, "")
		}
	})
	t.Run("ErrTargetReservedByActiveFork", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		op := h.mustFork("request-1", "turn-2")
		err := h.engine.DeleteSession(h.ctx, ws, op.TargetSessionID, false)
		requireCode(t, err, forkengine.CodeForkConflict, forkengine.ReasonTargetReserved)
	})
	t.Run("ErrTargetReservedByUnknownFork", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		h.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown}})
		op := h.forkAndProcess("request-1", "turn-2")
		err := h.engine.DeleteSession(h.ctx, ws, op.TargetSessionID, true)
		requireCode(t, err, forkengine.CodeForkConflict, forkengine.ReasonTargetReserved)
		require.NoError(t, h.engine.DeleteSession(h.ctx, ws, source, false), "an unknown fork does not hold its source")
	})
}

// Scenario 53: every other write to the source stays allowed while it is being forked.
func TestSourceStaysWritableDuringFork(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	op := h.mustFork("request-1", "turn-2")
	h.session(source, "provider-session-1", "renamed")
	h.turn(source, "turn-3", forkengine.PhaseRunning)
	h.messages(source, "turn-3")
	_, err := h.fork("request-2", "turn-2")
	require.NoError(t, err, "barrier on: the same operation comes back")
	require.Equal(t, forkengine.StatusCommitted, h.process(op).Status)
}
