package server_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/internal/servertest"
)

// TestServerReconcilesUnknownDeliveriesInTheBackground runs the real server: a fork whose
// provider answers unknown ends DELIVERY_UNKNOWN, and the server's own sweep then asks the
// provider what became of it, finds the child and commits it, with its lineage, without a second
// Fork and without anyone asking.
func TestServerReconcilesUnknownDeliveriesInTheBackground(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "forkgraph.db"), "-no-seed", "-fork-lease", "300ms")
	api := servertest.Client{T: t, Base: base}
	api.Must(`mutation { reportSession(input: {workspaceId: "w", id: "s", provider: "simulated", providerSessionId: "p-s",
		title: "Trip", settings: {simulated: {fork: "unknown", latencyMs: 0}}}) { id } }`, nil, nil)
	api.Must(`mutation { reportTurn(input: {workspaceId: "w", sessionId: "s", id: "s-t1", phase: SETTLED, outcome: COMPLETED,
		providerTurnId: "p-t1", providerTurnBinding: {h: 1}}) { id } }`, nil, nil)
	var start struct{ ForkSession struct{ ID string } }
	api.Must(`mutation { forkSession(input: {workspaceId: "w", sourceSessionId: "s", throughTurnId: "s-t1", requestId: "r1"}) { id } }`,
		nil, &start)

	type state struct {
		Phase             string
		ReconcileAttempts int
		Lineage           *struct{ SourceTurnID string }
	}
	var seen []string
	await.Until(t, 30*time.Second, "the fork commits", func() bool { // polling a real server over HTTP
		var got struct{ ForkOperation state }
		api.Must(`query($id: ID!) { forkOperation(workspaceId: "w", id: $id) { phase reconcileAttempts lineage { sourceTurnId } } }`,
			map[string]any{"id": start.ForkSession.ID}, &got)
		if len(seen) == 0 || seen[len(seen)-1] != got.ForkOperation.Phase {
			seen = append(seen, got.ForkOperation.Phase)
			t.Logf("phases so far: %v", seen) // what a timeout failure shows
		}
		if got.ForkOperation.Phase != "COMMITTED" {
			return false
		}
		require.Equal(t, 1, got.ForkOperation.ReconcileAttempts)
		require.Equal(t, "s-t1", got.ForkOperation.Lineage.SourceTurnID)
		return true
	})
	require.Contains(t, seen, "DELIVERY_UNKNOWN", "it was unknown before it was reconciled: %v", seen)
}
