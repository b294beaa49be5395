package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServerReconcilesUnknownDeliveriesInTheBackground runs the real server: a fork whose
// provider answers unknown ends DELIVERY_UNKNOWN, and the server's own sweep then asks the
// provider what became of it, finds the child and commits it, with its lineage, without a second
// Fork and without anyone asking.
func TestServerReconcilesUnknownDeliveriesInTheBackground(t *testing.T) {
	base, _ := startServer(t, filepath.Join(t.TempDir(), "forkgraph.db"), "-no-seed", "-fork-lease", "300ms")
	post(t, base, `mutation { reportSession(input: {workspaceId: "w", id: "s", provider: "simulated", providerSessionId: "p-s",
		title: "Trip", settings: {simulated: {fork: "unknown", latencyMs: 0}}}) { id } }`, nil, nil)
	post(t, base, `mutation { reportTurn(input: {workspaceId: "w", sessionId: "s", id: "s-t1", phase: SETTLED, outcome: COMPLETED,
		providerTurnId: "p-t1", providerTurnBinding: {h: 1}}) { id } }`, nil, nil)
	var start struct{ ForkSession struct{ ID string } }
	post(t, base, `mutation { forkSession(input: {workspaceId: "w", sourceSessionId: "s", throughTurnId: "s-t1", requestId: "r1"}) { id } }`,
		nil, &start)

	type state struct {
		Phase             string
		ReconcileAttempts int
		Lineage           *struct{ SourceTurnID string }
	}
	var seen []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got struct{ ForkOperation state }
		post(t, base, `query($id: ID!) { forkOperation(workspaceId: "w", id: $id) { phase reconcileAttempts lineage { sourceTurnId } } }`,
			map[string]any{"id": start.ForkSession.ID}, &got)
		if len(seen) == 0 || seen[len(seen)-1] != got.ForkOperation.Phase {
			seen = append(seen, got.ForkOperation.Phase)
		}
		if got.ForkOperation.Phase == "COMMITTED" {
			require.Equal(t, 1, got.ForkOperation.ReconcileAttempts)
			require.Equal(t, "s-t1", got.ForkOperation.Lineage.SourceTurnID)
			break
		}
		require.True(t, time.Now().Before(deadline), "still %v after 30s", seen)
		time.Sleep(50 * time.Millisecond) // polling a real server over HTTP, bounded by the deadline
	}
	require.Contains(t, seen, "DELIVERY_UNKNOWN", "it was unknown before it was reconciled: %v", seen)
}
