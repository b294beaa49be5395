package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// testTurnCountsBackfill: a database written before turn_counts existed gets counts that agree
// with its rows, and the counts follow writes after the upgrade.
func testTurnCountsBackfill(t *testing.T, cfg Config) {
	ctx := context.Background()
	old := openAtVersion(t, cfg, 10) // the schema of a binary from before version 11
	require.NoError(t, old.Update(ctx, func(tx forkengine.Tx) error {
		for ws, sessions := range map[string]map[string]int{"ws": {"long": 7, "short": 1, "empty": 0}, "other": {"long": 2}} {
			for id, n := range sessions {
				if err := upsertSessionAtVersion(ctx, tx, 10, forkengine.Session{WorkspaceID: ws, ID: id}); err != nil {
					return err
				}
				for i := range n {
					turn := forkengine.Turn{WorkspaceID: ws, SessionID: id, ID: fmt.Sprintf("%s-%d", id, i), Sequence: int64(i + 1)}
					if err := upsertTurnWithoutDetails(ctx, tx, turn); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}))
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	require.Equal(t, len(migrations)-old.migrated, db.migrated)
	ids := []string{"long", "short", "empty", "missing"}
	got, err := db.CountTurnsBySessionIDs(ctx, "ws", ids)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"long": 7, "short": 1}, got)
	got, err = db.CountTurnsBySessionIDs(ctx, "other", ids)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"long": 2}, got)

	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		return tx.UpsertTurn(ctx, forkengine.Turn{WorkspaceID: "ws", SessionID: "empty", ID: "empty-0", Sequence: 1})
	}))
	got, err = db.CountTurnsBySessionIDs(ctx, "ws", ids)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"long": 7, "short": 1, "empty": 1}, got)
}

func TestTurnCountsBackfillSQLite(t *testing.T) {
	t.Parallel()
	testTurnCountsBackfill(t, sqliteConfig(t))
}

func TestTurnCountsBackfillPostgres(t *testing.T) {
	requirePostgres(t)
	testTurnCountsBackfill(t, postgresConfig(t))
}
