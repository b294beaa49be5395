package forkengine_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// phases in their order; a report may stay or move forward, never back.
var phases = []forkengine.TurnPhase{forkengine.PhaseSubmitted, forkengine.PhaseRunning, forkengine.PhaseWaiting,
	forkengine.PhaseSettling, forkengine.PhaseSettled}

// TestTurnPhaseNeverMovesBack tries every pair of phases, so a move back by a single step (the
// one a rule off by one would let through) is tried for each phase, not only jumps of two.
func TestTurnPhaseNeverMovesBack(t *testing.T) {
	t.Parallel()
	for i, from := range phases {
		for j, to := range phases {
			name := fmt.Sprintf("%s->%s", from, to)
			t.Run(name, func(t *testing.T) {
				h := newHarness(t)
				h.seed(0)
				before := h.turn(source, "t", from)
				events := h.eventCount()
				in := forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: "t", Phase: to}
				if to == forkengine.PhaseSettled {
					in.Outcome = forkengine.OutcomeCompleted
					in.ProviderTurnID = ptr("provider-t")
					in.ProviderTurnBinding = json.RawMessage(`{"schemaVersion":1}`)
				}
				got, err := h.engine.ReportTurn(h.ctx, in)
				if j >= i {
					require.NoError(t, err)
					require.Equal(t, to, got.Phase)
					return
				}
				requireCode(t, err, forkengine.CodeInvalid, forkengine.ReasonTurnPhaseBackwards)
				require.Equal(t, events, h.eventCount(), "a refused report writes nothing")
				after, err := h.store.GetTurn(h.ctx, ws, "t")
				require.NoError(t, err)
				require.Equal(t, before, after)
			})
		}
	}
}

// TestPhaseRanksAreConsecutive pins the order the rule relies on.
func TestPhaseRanksAreConsecutive(t *testing.T) {
	t.Parallel()
	for i, p := range phases {
		require.Equal(t, i+1, p.Rank(), "%s", p)
	}
}
