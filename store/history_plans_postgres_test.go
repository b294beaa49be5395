package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPostgresDeepMessagesTakeTheGenericPlan: on PostgreSQL the read of a deep page's inherited
// messages, a prepared statement of the driver's cache, switches to its generic plan after the
// server's five custom ones instead of being planned on every run (with the runs' values in
// sight of the planner its custom plans were estimated cheaper than the generic one, and a
// page's planning cost several times its execution). Counted by pg_prepared_statements on the
// one connection that runs it, for a page inside one segment's range and one across twenty, of
// each turn's whole list (messagesOfTurnsSQL) and of a page of each (turnMessagePagesSQL, what
// Turn.messages and Turn.messagesConnection read).
func TestPostgresDeepMessagesTakeTheGenericPlan(t *testing.T) {
	requirePostgres(t)
	t.Parallel() // a schema of its own, and its plan counts are of the one connection it holds
	db := openTest(t, postgresConfig(t))
	ctx := context.Background()
	c := buildChain(t, db, 52, 50)
	seedLongTranscript(t, db, "long", 40, 1000)
	require.NoError(t, db.queries.db.Exec("ANALYZE").Error)
	sqlDB, err := db.queries.db.DB()
	require.NoError(t, err)
	for _, after := range []int64{10, 80} {
		page, err := db.TurnsBySessionIDs(ctx, "ws", []string{c.deep}, after, 20)
		require.NoError(t, err)
		ids := make([]string, 0, 20)
		for _, turn := range page[c.deep] {
			ids = append(ids, turn.ID)
		}
		stored, values := presentedRuns(ids)
		require.Empty(t, stored, "a page of inherited turns")
		for _, read := range []struct {
			name, query string
			args        []any
		}{
			{"whole lists", db.dialect.placeholders(messagesOfTurnsSQL(db.dialect, "", len(values)/3, qualifiedMessagesOfWorkspace, false)),
				messagesOfTurnsArgs(db.dialect, nil, values, "ws")},
			{"pages", db.dialect.placeholders(turnMessagePagesSQL(db.dialect, qualifiedMessagesOfWorkspace, 0, len(values)/3, false)),
				turnMessagePagesArgs(db.dialect, "ws", nil, values, 0, 11)},
		} {
			conn, err := sqlDB.Conn(ctx)
			require.NoError(t, err)
			const runs = 10
			for range runs {
				rows, err := conn.QueryContext(ctx, read.query, read.args...)
				require.NoError(t, err)
				n := 0
				for rows.Next() {
					n++
				}
				require.NoError(t, rows.Err())
				require.NoError(t, rows.Close())
				require.Equal(t, 40, n, "the page's messages (%s)", read.name)
			}
			var generic, custom int64
			require.NoError(t, conn.QueryRowContext(ctx,
				"SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1", read.query).Scan(&generic, &custom))
			require.NoError(t, conn.Close())
			require.LessOrEqual(t, custom, int64(5), "custom plans of the %s after %d (generic %d)", read.name, after, generic)
			require.GreaterOrEqual(t, generic, int64(runs-5), "generic plans of the %s after %d", read.name, after)
		}
	}
}
