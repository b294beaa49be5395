package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// Scenario 51: the family root's title numbers every fork of the family.
func TestTitles(t *testing.T) {
	t.Parallel()
	t.Run("OKFamilyNumbering", func(t *testing.T) {
		h := newHarness(t, withoutBarrier)
		h.seed(2)
		first := h.forkAndProcess("request-1", "turn-2")
		require.Equal(t, "123 (2)", first.TargetTitle)

		childTurns, err := h.store.TurnsThrough(h.ctx, ws, first.TargetSessionID, 100)
		require.NoError(t, err)
		ofChild, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws,
			SourceSessionID: first.TargetSessionID, ThroughTurnID: childTurns[1].ID, RequestID: "request-2"})
		require.NoError(t, err)
		require.Equal(t, "123 (3)", h.process(ofChild).TargetTitle)

		again := h.forkAndProcess("request-3", "turn-1")
		require.Equal(t, "123 (4)", again.TargetTitle)
	})
	t.Run("OKUnfinishedForksCount", func(t *testing.T) {
		h := newHarness(t)
		h.seed(3)
		child := h.forkAndProcess("request-1", "turn-3")
		childTurns, err := h.store.TurnsThrough(h.ctx, ws, child.TargetSessionID, 100)
		require.NoError(t, err)
		pending, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws,
			SourceSessionID: child.TargetSessionID, ThroughTurnID: childTurns[2].ID, RequestID: "request-2"})
		require.NoError(t, err)
		require.Equal(t, "123 (3)", pending.TargetTitle)
		h.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown}})
		require.Equal(t, "123 (4)", h.forkAndProcess("request-3", "turn-1").TargetTitle)
		require.Equal(t, "123 (5)", h.mustFork("request-4", "turn-2").TargetTitle,
			"counted: committed child, prepared grandchild, unknown sibling")
	})
	t.Run("OKFailedForksDoNotCount", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		h.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionNotStarted}})
		require.Equal(t, forkengine.StatusFailed, h.forkAndProcess("request-1", "turn-2").Status)
		require.Equal(t, "123 (2)", h.mustFork("request-2", "turn-2").TargetTitle)
	})
	t.Run("OKSourceTitleWhenRootHasNone", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		first := h.forkAndProcess("request-1", "turn-2")
		h.session(source, "provider-session-1", "") // the root loses its title
		childTurns, err := h.store.TurnsThrough(h.ctx, ws, first.TargetSessionID, 100)
		require.NoError(t, err)
		ofChild, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws,
			SourceSessionID: first.TargetSessionID, ThroughTurnID: childTurns[1].ID, RequestID: "request-2"})
		require.NoError(t, err)
		require.Equal(t, "123 (2) (3)", ofChild.TargetTitle)
	})
	t.Run("OKEmptyTitle", func(t *testing.T) {
		h := newHarness(t)
		h.session(source, "provider-session-1", "")
		h.turn(source, "turn-1", forkengine.PhaseSettled)
		require.Equal(t, "", h.mustFork("request-1", "turn-1").TargetTitle)
	})
}
