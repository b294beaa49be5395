package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

// committedOps stores a lineage for each of n committed operations and returns the operations,
// as a page of committed operations read by the API would hold them.
func committedOps(t *testing.T, db *store.DB, n int) []forkengine.ForkOperation {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ops := make([]forkengine.ForkOperation, n)
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		for i := range ops {
			op := forkengine.ForkOperation{WorkspaceID: "ws", ID: fmt.Sprintf("op-%d", i),
				SourceSessionID: "source", ThroughTurnID: "turn-1", TargetSessionID: fmt.Sprintf("target-%d", i),
				TargetTurnID: fmt.Sprintf("target-%d-turn-1", i), Status: forkengine.StatusCommitted, CompletedAt: &at}
			ops[i] = op
			err := tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: op.WorkspaceID, OperationID: op.ID,
				SourceSessionID: op.SourceSessionID, SourceTurnID: op.ThroughTurnID,
				TargetSessionID: op.TargetSessionID, TargetTurnID: op.TargetTurnID, ForkedAt: at})
			if err != nil {
				return err
			}
		}
		return nil
	}))
	return ops
}

func openEngine(t *testing.T) (*store.DB, *forkengine.Engine) {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := store.Open(context.Background(), store.Config{DSN: filepath.Join(t.TempDir(), "forkgraph.db"), Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	engine, err := forkengine.New(forkengine.Config{Store: db, Logger: quiet, NoBackground: true})
	require.NoError(t, err)
	return db, engine
}

func TestCommittedResultsStatementsDoNotGrowWithThePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, engine := openEngine(t)
	ops := committedOps(t, db, 40)
	statementsFor := func(page []forkengine.ForkOperation) int64 {
		before := db.Statements()
		results, err := engine.CommittedResults(ctx, page)
		require.NoError(t, err)
		require.Len(t, results, len(page))
		for i, r := range results {
			require.NoError(t, r.Err)
			require.Equal(t, page[i].TargetSessionID, r.Session.ID)
			require.Equal(t, page[i].ID, r.Lineage.OperationID)
		}
		return db.Statements() - before
	}
	one := statementsFor(ops[:1])
	require.Equal(t, int64(1), one)
	require.Equal(t, one, statementsFor(ops))
}

func TestCommittedResultsErrorsArePerOperation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, engine := openEngine(t)
	ops := committedOps(t, db, 3)
	inconsistent := ops[1]
	inconsistent.TargetTurnID = "another-turn"
	notCommitted := ops[2]
	notCommitted.Status = forkengine.StatusDispatching
	results, err := engine.CommittedResults(ctx, []forkengine.ForkOperation{ops[0], inconsistent, notCommitted})
	require.NoError(t, err)
	require.NoError(t, results[0].Err)
	require.Equal(t, ops[0].TargetTurnID, results[0].Lineage.TargetTurnID)
	requireForkConflict(t, results[1].Err, forkengine.ReasonInconsistentLineage)
	require.Zero(t, results[1].Session)
	requireForkConflict(t, results[2].Err, "")
}

func TestCommittedResultsOfAnEmptyPageReadNothing(t *testing.T) {
	t.Parallel()
	db, engine := openEngine(t)
	before := db.Statements()
	results, err := engine.CommittedResults(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, results)
	require.Equal(t, before, db.Statements())
}

func requireForkConflict(t *testing.T, err error, reason string) {
	t.Helper()
	var ferr *forkengine.Error
	require.True(t, errors.As(err, &ferr), "want a forkengine error, got %v", err)
	require.Equal(t, forkengine.CodeForkConflict, ferr.Code)
	require.Equal(t, reason, ferr.Reason)
}
