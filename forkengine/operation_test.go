package forkengine_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

var allStatuses = []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching,
	forkengine.StatusProviderAccepted, forkengine.StatusCommitted, forkengine.StatusFailed, forkengine.StatusUnknown}

// Scenario 16 and SPEC §2: the public projection collapses the active statuses into ACCEPTED.
func TestPublicProjection(t *testing.T) {
	t.Parallel()
	want := map[forkengine.OperationStatus][2]string{
		forkengine.StatusPrepared:         {"accepted", "frozen"},
		forkengine.StatusDispatching:      {"accepted", "dispatching"},
		forkengine.StatusProviderAccepted: {"accepted", "materializing"},
		forkengine.StatusCommitted:        {"committed", "committed"},
		forkengine.StatusFailed:           {"failed", "failed"},
		forkengine.StatusUnknown:          {"unknown", "delivery_unknown"},
	}
	for _, s := range allStatuses {
		status, phase := s.Public()
		require.Equal(t, want[s], [2]string{string(status), string(phase)}, s)
	}
}

// The state table: the saga only moves forward, nothing leaves committed or failed, and unknown is
// left only for an answer (reconciliation's found or absent, or abandon), never for a dispatch.
func TestTransitions(t *testing.T) {
	t.Parallel()
	legal := map[string]bool{
		"prepared->dispatching": true, "prepared->failed": true,
		"dispatching->provider_accepted": true, "dispatching->failed": true, "dispatching->unknown": true,
		"provider_accepted->committed": true,
		"unknown->provider_accepted":   true, "unknown->failed": true,
	}
	for _, from := range allStatuses {
		for _, to := range allStatuses {
			move := fmt.Sprintf("%s->%s", from, to)
			require.Equal(t, legal[move], forkengine.CanTransition(from, to), move)
		}
	}
}

// Scenario 1: a boundary reason survives wrapping and can be matched by code and reason.
func TestBoundaryReasonSurvivesWrapping(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	h.turn(source, "turn-2", forkengine.PhaseRunning)
	_, err := h.fork("request-1", "turn-2")
	require.ErrorIs(t, err, &forkengine.Error{Code: forkengine.CodeForkConflict})
	require.ErrorIs(t, err, &forkengine.Error{Code: forkengine.CodeForkConflict, Reason: forkengine.ReasonTurnNotSettled})
	require.NotErrorIs(t, err, &forkengine.Error{Code: forkengine.CodeForkConflict, Reason: forkengine.ReasonTurnNotFound})
	require.Equal(t, forkengine.ReasonTurnNotSettled, forkengine.ErrorReason(fmt.Errorf("resolver: %w", err)))
}
