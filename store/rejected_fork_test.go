package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
)

// rejectedWithNUL is the session settings of issue 21's reproduction: the simulated provider
// refuses every fork with an error text holding a NUL.
const rejectedWithNUL = `{"simulated":{"fork":"rejected","error":"a\u0000b"}}`

// A provider's refusal whose text holds a NUL ends FAILED, on SQLite and on PostgreSQL, and so
// does one whose answer was lost with the process that received it: that delivery is unknown, and
// reconciliation must not contradict the refusal. Before, on PostgreSQL the NUL failed every
// write of the answer, the lease expired, the operation became unknown, and the simulated
// provider's reconcile found a child: the refused fork was COMMITTED.
func TestRejectedForkNeverCommits(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]func(*testing.T) Config{"SQLite": func(t *testing.T) Config { return sqliteConfig(t) }, "Postgres": postgresOrSkip} {
		t.Run(name, func(t *testing.T) {
			db := openTest(t, cfg(t))
			ctx := context.Background()
			e := simulatedEngine(t, db, "instance-1")
			seedRejectingSource(t, e)

			op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t1", RequestID: "answered"})
			require.NoError(t, err)
			op, err = e.ProcessOperation(ctx, "w", op.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusFailed, op.Status, "the refusal is recorded: %q", op.Error)
			require.Equal(t, "ab", op.Error, "its text without the NUL")

			// The answer lost with its process: the operation was left dispatching.
			lost, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t1", RequestID: "lost"})
			require.NoError(t, err)
			dispatching := lost
			dispatching.Status = forkengine.StatusDispatching
			require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
				moved, err := tx.UpdateOperation(ctx, dispatching, forkengine.StatusPrepared)
				require.True(t, moved)
				return err
			}))
			restarted := simulatedEngine(t, db, "instance-1")
			_, err = restarted.Recover(ctx)
			require.NoError(t, err)
			unknown, err := db.GetOperation(ctx, "w", lost.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusUnknown, unknown.Status, "a dispatch cut short is unknown after a restart")
			got, err := restarted.ReconcileForkOperation(ctx, "w", lost.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusFailed, got.Status, "reconciliation of a refused fork finds no child")
			require.Equal(t, forkengine.ReasonReconciledAbsent, got.ErrorReason)
			n, err := db.CountOperations(ctx, "w", forkengine.OperationFilter{Statuses: []forkengine.OperationStatus{forkengine.StatusCommitted}})
			require.NoError(t, err)
			require.Zero(t, n, "no refused fork is ever committed")
		})
	}
}

// postgresOrSkip is postgresConfig when the Postgres tests have a server.
func postgresOrSkip(t *testing.T) Config {
	requirePostgres(t)
	return postgresConfig(t)
}

// simulatedEngine is an engine over db whose only driver is the simulated provider, without
// background work, as instance id.
func simulatedEngine(t *testing.T, db *DB, id string) *forkengine.Engine {
	t.Helper()
	e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})},
		InstanceID: id, NoBackground: true, Logger: quietLog})
	require.NoError(t, err)
	return e
}

// seedRejectingSource reports source "src" scripted with rejectedWithNUL and a settled, bound turn.
func seedRejectingSource(t *testing.T, e *forkengine.Engine) {
	t.Helper()
	ctx := context.Background()
	psid, ptid := "provider-src", "provider-src-t1"
	_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: "src", Provider: "simulated",
		ProviderSessionID: &psid, Settings: json.RawMessage(rejectedWithNUL)})
	require.NoError(t, err)
	_, err = e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: "src", ID: "src-t1",
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid,
		ProviderTurnBinding: json.RawMessage(`{"v":1}`)})
	require.NoError(t, err)
}
