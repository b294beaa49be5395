package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// bulkFixture writes a small dataset in tx: sessions with titles and messages of shared words,
// one soft-deleted, one hidden, one renamed after its first upsert, one whose creation time
// changes, and a second workspace; first and last pick which sessions.
func bulkFixture(ctx context.Context, tx forkengine.Tx, first, last int) error {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	words := []string{"alpha", "beta", "Gamma", "delta", "東京タワー", "beta", "epsilon"}
	for i := first; i < last; i++ {
		ws := "ws"
		if i%5 == 4 {
			ws = "other"
		}
		id := fmt.Sprintf("s%02d", i)
		created := at.Add(time.Duration(i) * time.Second)
		s := forkengine.Session{WorkspaceID: ws, ID: id, Kind: forkengine.SessionRoot, Provider: "sim", ProviderSessionID: "p-" + id,
			Title: fmt.Sprintf("Session %d %s", i, words[i%len(words)]), Visible: i%7 != 3, CreatedAt: created, UpdatedAt: created}
		if err := tx.UpsertSession(ctx, s); err != nil {
			return err
		}
		turn := forkengine.Turn{WorkspaceID: ws, SessionID: id, ID: id + "-t1", Sequence: 1, Phase: forkengine.PhaseSettled,
			Outcome: forkengine.OutcomeCompleted, Origin: "user", StartedAt: created, UpdatedAt: created}
		if err := tx.InsertTurns(ctx, []forkengine.Turn{turn}); err != nil {
			return err
		}
		var msgs []forkengine.Message
		for m := range 3 {
			msgs = append(msgs, forkengine.Message{WorkspaceID: ws, SessionID: id, TurnID: turn.ID, ID: fmt.Sprintf("%s-m%d", id, m),
				Role: forkengine.RoleUser, CreatedAt: created,
				Content: fmt.Sprintf("%s and %s, message %d of %d", words[(i+m)%len(words)], words[(i*3+m)%len(words)], m, i)})
		}
		if _, err := tx.InsertMessages(ctx, msgs); err != nil {
			return err
		}
		if i%6 == 1 { // renamed: the old title's words leave its document unless a message has them
			s.Title = "Renamed " + words[(i+2)%len(words)]
			if err := tx.UpsertSession(ctx, s); err != nil {
				return err
			}
		}
		if i%8 == 2 { // re-created later: its rows are keyed by the new time
			s.CreatedAt = s.CreatedAt.Add(time.Hour)
			if err := tx.UpsertSession(ctx, s); err != nil {
				return err
			}
		}
		if i%4 == 3 {
			if err := tx.SoftDeleteSession(ctx, ws, id, created); err != nil {
				return err
			}
		}
	}
	return nil
}

// dumpForCompare reads every table a load writes, as text, counts summed over their shards.
func dumpForCompare(t *testing.T, db *DB) map[string][]string {
	t.Helper()
	queries := map[string]string{
		"sessions":     "SELECT * FROM sessions ORDER BY workspace_id, id",
		"turns":        "SELECT * FROM turns ORDER BY workspace_id, id",
		"messages":     "SELECT * FROM messages ORDER BY workspace_id, id",
		"counters":     "SELECT * FROM counters ORDER BY scope, name",
		"turn_counts":  "SELECT * FROM turn_counts ORDER BY workspace_id, session_id",
		"terms":        "SELECT * FROM session_terms ORDER BY workspace_id, term, created_at_us, session_id",
		"term_counts":  "SELECT workspace_id, term, class, SUM(n) FROM session_term_counts GROUP BY workspace_id, term, class HAVING SUM(n) <> 0 ORDER BY 1, 2, 3",
		"sess_counts":  "SELECT workspace_id, class, SUM(n) FROM session_counts GROUP BY workspace_id, class HAVING SUM(n) <> 0 ORDER BY 1, 2",
		"lineages":     "SELECT COUNT(*) FROM lineages",
		"event_counts": "SELECT COUNT(*) FROM events",
	}
	if db.Driver() == DriverPostgres {
		queries["indexes"] = "SELECT indexname, replace(indexdef, current_schema() || '.', '') FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'session_terms' ORDER BY 1"
		queries["triggers"] = "SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'sessions'::regclass AND NOT tgisinternal ORDER BY 1"
	} else {
		queries["indexes"] = "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'session_terms' ORDER BY 1"
	}
	out := map[string][]string{}
	for name, q := range queries {
		rows, err := db.gorm.Raw(q).Rows()
		require.NoError(t, err, name)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			cells := make([]string, len(vals))
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				cells[i] = fmt.Sprint(v)
			}
			out[name] = append(out[name], strings.Join(cells, "|"))
		}
		require.NoError(t, rows.Err())
		rows.Close()
	}
	return out
}

// touchSessions retitles two sessions of bulkFixture's first part, as both sides of
// testBulkLoadMatchesUpdate do.
func touchSessions(ctx context.Context, tx forkengine.Tx) error {
	for _, id := range []string{"s01", "s06"} {
		s, err := tx.GetSession(ctx, "ws", id)
		if err != nil {
			return err
		}
		s.Title = "Touched again " + s.Title
		if err := tx.UpsertSession(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// testBulkLoadMatchesUpdate: a dataset loaded with BulkLoad leaves the database as the same
// writes through Update do, index and counts included, also when the load touches sessions that
// Update indexed before it; and the loaded sessions are found by search.
func testBulkLoadMatchesUpdate(t *testing.T, newConfig func(testing.TB) Config) {
	ctx := context.Background()
	updated := openTest(t, newConfig(t))
	require.NoError(t, updated.Update(ctx, func(tx forkengine.Tx) error { return bulkFixture(ctx, tx, 0, 20) }))
	require.NoError(t, updated.Update(ctx, func(tx forkengine.Tx) error { return bulkFixture(ctx, tx, 20, 40) }))

	loaded := openTest(t, newConfig(t))
	require.NoError(t, loaded.Update(ctx, func(tx forkengine.Tx) error { return bulkFixture(ctx, tx, 0, 20) }))
	require.NoError(t, loaded.BulkLoad(ctx, func(tx forkengine.Tx) error {
		if err := bulkFixture(ctx, tx, 20, 40); err != nil {
			return err
		}
		// Touch sessions the first Update indexed: their documents are rebuilt whole.
		return touchSessions(ctx, tx)
	}))
	require.NoError(t, updated.Update(ctx, func(tx forkengine.Tx) error { return touchSessions(ctx, tx) }))
	want, got := dumpForCompare(t, updated), dumpForCompare(t, loaded)
	require.NotEmpty(t, want["terms"])
	for name := range want {
		require.Equal(t, want[name], got[name], "table %s", name)
	}

	terms, err := forkengine.ParseSearch("beta touched")
	require.NoError(t, err)
	page, err := loaded.SearchSessions(ctx, "ws", forkengine.SessionFilter{Search: terms}, forkengine.PageCursor{}, 10, 0, false)
	require.NoError(t, err)
	var ids []string
	for _, s := range page.Sessions {
		ids = append(ids, s.ID)
	}
	require.NotEmpty(t, ids)

	// A load that fails writes nothing.
	before := dumpForCompare(t, loaded)
	require.Error(t, loaded.BulkLoad(ctx, func(tx forkengine.Tx) error {
		if err := bulkFixture(ctx, tx, 40, 45); err != nil {
			return err
		}
		return fmt.Errorf("stop")
	}))
	require.Equal(t, before, dumpForCompare(t, loaded))
}

func TestBulkLoadMatchesUpdateSQLite(t *testing.T) {
	t.Parallel()
	testBulkLoadMatchesUpdate(t, sqliteConfig)
}

func TestBulkLoadMatchesUpdatePostgres(t *testing.T) {
	requirePostgres(t)
	testBulkLoadMatchesUpdate(t, postgresConfig)
}

// TestBulkLoadRebuildsIndexesPostgres: a load large enough to write session_terms without its
// indexes, and to analyze the tables it writes as it goes, leaves the same rows and the same
// indexes.
func TestBulkLoadRebuildsIndexesPostgres(t *testing.T) {
	requirePostgres(t)
	defer func(n, counts int, at []int) { bulkRebuildRows, bulkCountBatch, bulkAnalyzeAt = n, counts, at }(bulkRebuildRows, bulkCountBatch, bulkAnalyzeAt)
	bulkRebuildRows, bulkCountBatch, bulkAnalyzeAt = 1, 7, []int{1, 10, 100}
	testBulkLoadMatchesUpdate(t, postgresConfig)
}
