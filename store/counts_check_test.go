package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// requireCountsMatchRows compares every count the writes maintain (session_counts under each
// filter shape, turn_counts, operation counts, fork_families) with a count of the rows
// themselves. step names the moment in the failure message.
func requireCountsMatchRows(t *testing.T, db *DB, ws, step string) {
	t.Helper()
	requireSessionCountsMatchRows(t, db, ws, step)
	requireTurnCountsMatchRows(t, db, ws, step)
	ctx := context.Background()
	ops, err := db.ListOperations(ctx, ws, forkengine.OperationFilter{}, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	nops, err := db.CountOperations(ctx, ws, forkengine.OperationFilter{})
	require.NoError(t, err)
	require.Equal(t, len(ops), nops, "%s: operations", step)
	requireFamilyCountsMatchRows(t, db, ws, step)
}

func requireSessionCountsMatchRows(t *testing.T, db *DB, ws, step string) {
	t.Helper()
	ctx := context.Background()
	yes, no := true, false
	for _, kind := range []forkengine.SessionKind{"", forkengine.SessionRoot, forkengine.SessionChild} {
		for _, prov := range []string{"", "scripted", "other"} {
			for _, vis := range []*bool{nil, &yes, &no} {
				for _, del := range []bool{false, true} {
					for _, roots := range []bool{false, true} {
						f := forkengine.SessionFilter{Kind: kind, Provider: prov, Visible: vis, IncludeDeleted: del, RootsOnly: roots}
						rows, err := db.ListSessions(ctx, ws, f, forkengine.PageCursor{}, 0)
						require.NoError(t, err)
						n, err := db.CountSessions(ctx, ws, f)
						require.NoError(t, err)
						require.Equal(t, len(rows), n, "%s: sessions %+v", step, f)
					}
				}
			}
		}
	}
}

func requireTurnCountsMatchRows(t *testing.T, db *DB, ws, step string) {
	t.Helper()
	var turnRows []struct {
		SessionID string
		N         int64
	}
	require.NoError(t, db.gorm.Raw("SELECT session_id, COUNT(*) AS n FROM turns WHERE workspace_id = ? GROUP BY session_id", ws).Scan(&turnRows).Error)
	// A fork's count is its own rows and the turns its History inherits.
	var inherited []struct {
		SessionID string
		N         int64
	}
	require.NoError(t, db.gorm.Raw("SELECT session_id, inherited_turns AS n FROM histories WHERE workspace_id = ?", ws).Scan(&inherited).Error)
	want := map[string]int{}
	var ids []string
	for _, r := range append(turnRows, inherited...) {
		want[r.SessionID] += int(r.N)
		ids = append(ids, r.SessionID)
	}
	for id, n := range want {
		if n == 0 {
			delete(want, id)
		}
	}
	var sids []string
	require.NoError(t, db.gorm.Raw("SELECT id FROM sessions WHERE workspace_id = ?", ws).Scan(&sids).Error)
	ids = append(ids, sids...)
	got, err := db.CountTurnsBySessionIDs(context.Background(), ws, ids)
	require.NoError(t, err)
	require.Equal(t, want, got, "%s: turn counts", step)
	var stale int64
	require.NoError(t, db.gorm.Raw(`SELECT COUNT(*) FROM turn_counts c WHERE n <> 0
		AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.workspace_id = c.workspace_id AND s.id = c.session_id)`).Scan(&stale).Error)
	require.Zero(t, stale, "%s: turn_counts rows of sessions that are gone", step)
}

// requireFamilyCountsMatchRows checks, for every root session, that its family count is the
// number of operations that did not fail whose source is in its family.
func requireFamilyCountsMatchRows(t *testing.T, db *DB, ws, step string) {
	t.Helper()
	var roots []string
	require.NoError(t, db.gorm.Raw(`SELECT id FROM sessions s WHERE workspace_id = ?
		AND NOT EXISTS (SELECT 1 FROM lineages l WHERE l.workspace_id = s.workspace_id AND l.target_session_id = s.id)`, ws).Scan(&roots).Error)
	for _, r := range roots {
		var n int64
		require.NoError(t, db.gorm.Raw(`WITH RECURSIVE fam(id) AS (SELECT CAST(? AS TEXT)
				UNION SELECT l.target_session_id FROM fam f JOIN lineages l ON l.workspace_id = ? AND l.source_session_id = f.id)
			SELECT COUNT(*) FROM fork_operations o
			WHERE o.workspace_id = ? AND o.status <> 'failed' AND o.source_session_id IN (SELECT id FROM fam)`, r, ws, ws).Scan(&n).Error)
		got, err := db.CountFamilyForks(context.Background(), ws, r)
		require.NoError(t, err)
		require.Equal(t, int(n), got, "%s: family of %s", step, r)
	}
}
