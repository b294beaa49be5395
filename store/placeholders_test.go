package store

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fixed SQL's ? becomes $n on PostgreSQL and +? on SQLite (dialect.placeholders), and a +?
// is the value a ? was: the same rows for text, integer, real, blob and NULL arguments, compared
// with a column's affinity as before, through an index seek, a join and a LIMIT.
func TestPlaceholdersAsEachDriverTakesThem(t *testing.T) {
	t.Parallel()
	q := "SELECT a FROM t WHERE a = ? AND b IN (?, ?) LIMIT ?"
	require.Equal(t, "SELECT a FROM t WHERE a = $1 AND b IN ($2, $3) LIMIT $4", postgresDialect.placeholders(q))
	require.Equal(t, "SELECT a FROM t WHERE a = +? AND b IN (+?, +?) LIMIT +?", sqliteDialect.placeholders(q))
	require.Equal(t, q, dialect{}.placeholders(q), "a dialect that wants neither")

	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	pool := db.queries.db.Statement.ConnPool
	for _, stmt := range []string{
		"CREATE TABLE pt (k TEXT NOT NULL, n INTEGER, r REAL, b BLOB)",
		"CREATE INDEX pt_k ON pt (k)",
		"INSERT INTO pt VALUES ('5', 5, 1.5, x'00ff'), ('a', 1, 0, NULL), ('b', 0, 2.5, x'01')",
	} {
		_, err := pool.ExecContext(ctx, stmt)
		require.NoError(t, err)
	}
	read := func(query string, args ...any) []string {
		t.Helper()
		var out []string
		var k string
		require.NoError(t, scanEach(ctx, db.queries, query, args, []any{&k}, func() { out = append(out, k) }))
		return out
	}
	for _, c := range []struct {
		query string
		args  []any
		want  []string
	}{
		{"SELECT k FROM pt WHERE k = ?", []any{"a"}, []string{"a"}},
		{"SELECT k FROM pt WHERE k = ?", []any{5}, []string{"5"}}, // the column's TEXT affinity applies to the argument
		{"SELECT k FROM pt WHERE n = ?", []any{"5"}, []string{"5"}},
		{"SELECT k FROM pt WHERE r > ? ORDER BY k", []any{1.0}, []string{"5", "b"}},
		{"SELECT k FROM pt WHERE b = ?", []any{[]byte{0, 0xff}}, []string{"5"}},
		{"SELECT k FROM pt WHERE COALESCE(b, ?) IS ?", []any{nil, nil}, []string{"a"}},
		{"SELECT x.k FROM pt x CROSS JOIN pt y WHERE y.k = ? AND x.n = y.n + ? ORDER BY x.k", []any{"b", 1}, []string{"a"}},
		{"SELECT k FROM pt ORDER BY k LIMIT ? OFFSET ?", []any{2, 1}, []string{"a", "b"}},
		{"SELECT k FROM pt WHERE k IN (SELECT value FROM json_each(?)) ORDER BY k", []any{`["b","5"]`}, []string{"5", "b"}},
	} {
		require.Equal(t, c.want, read(c.query, c.args...), c.query)
	}
	rows, err := pool.QueryContext(ctx, "EXPLAIN QUERY PLAN "+sqliteDialect.placeholders("SELECT k FROM pt WHERE k = ?"), "a")
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"SEARCH pt USING COVERING INDEX pt_k (k=?)"}, plan, "a +? seeks the index as a ? did")
}

// Every fixed statement the store sends to SQLite binds its arguments as +?, never a bare ?.
func TestSQLiteStatementsBindNoBareParameter(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	selects := captureSelects(t, db)
	c := buildChain(t, db, 3, 2)
	ctx := context.Background()
	page, err := db.TurnsBySessionIDs(ctx, "ws", []string{c.deep, c.root}, 0, 10)
	require.NoError(t, err)
	var ids []string
	for _, turn := range page[c.deep] {
		ids = append(ids, turn.ID)
	}
	_, err = db.MessagesByTurnIDs(ctx, "ws", ids)
	require.NoError(t, err)
	_, err = db.LatestTurnsBySessionIDs(ctx, "ws", []string{c.deep, c.root})
	require.NoError(t, err)
	fixed := 0
	for _, q := range selects() {
		if strings.Contains(q.sql, "`") {
			continue // gorm's own builder (it quotes names), which binds as it always did
		}
		fixed++
		require.NotRegexp(t, `(^|[^+])\?`, q.sql, "a bare parameter")
	}
	require.Positive(t, fixed)
}
