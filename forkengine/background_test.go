package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The background work commits from its own copy of the frozen snapshot: what the caller does with
// the operation StartFork returned never reaches the fork (and, under -race, never races with it).
func TestBackgroundCommitIgnoresChangesToTheReturnedOperation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBackground)
	h.seed(2)
	op := h.mustFork("request-1", "turn-2")
	op.Snapshot.Segments[0].Watermark = 0 // would hide every message
	op.Snapshot.Boundary.ProviderTurnBinding[0] = ' '
	require.NoError(t, h.engine.Close(h.ctx)) // waits for the background work

	committed := h.stored(op.ID)
	require.Equal(t, forkengine.StatusCommitted, committed.Status)
	turns, err := h.store.TurnsThrough(h.ctx, ws, committed.TargetSessionID, 100)
	require.NoError(t, err)
	byTurn, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{turns[0].ID})
	require.NoError(t, err)
	require.Equal(t, "prompt of turn-1", byTurn[turns[0].ID][0].Content)
	source, err := h.store.GetTurn(h.ctx, ws, "turn-1")
	require.NoError(t, err)
	require.Equal(t, source.ProviderTurnBinding, turns[0].ProviderTurnBinding)
}
