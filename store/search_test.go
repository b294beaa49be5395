package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// testSearchBackfill: a database written before the search index existed (migration 16) finds
// its sessions by their titles and messages once migrated, with counts that agree with its pages,
// across more messages than one page of the backfill's walk.
func testSearchBackfill(t *testing.T, cfg Config) {
	ctx := context.Background()
	old := openAtVersion(t, cfg, searchMigration.version-1)
	// The rows as a binary of the version before wrote them: raw, since this code indexes as it writes.
	exec := func(query string, args ...any) { require.NoError(t, old.gorm.Exec(query, args...).Error) }
	for i := range 5 {
		id := fmt.Sprintf("s%d", i)
		deleted := any(nil)
		if i == 4 {
			deleted = int64(99)
		}
		exec(`INSERT INTO sessions (workspace_id, id, kind, provider, provider_session_id, title, rail_section_key, cwd, model,
			settings, visible, created_at_us, updated_at_us, deleted_at_us) VALUES (?, ?, 'root', 'sim', ?, ?, '', '', '', '{}', ?, ?, ?, ?)`,
			"ws", id, "p-"+id, fmt.Sprintf("Session %d about billing", i), true, int64(i), int64(i), deleted)
		exec(`INSERT INTO turns (workspace_id, id, session_id, sequence, phase, outcome, origin, started_at_us, updated_at_us, provider_turn_id)
			VALUES (?, ?, ?, 1, 'settled', 'completed', '', 0, 0, '')`, "ws", id+"-t1", id)
	}
	const messages = 4500 // more than two pages of the walk
	for m := range messages {
		exec(`INSERT INTO messages (workspace_id, id, session_id, turn_id, position, role, content, created_at_us) VALUES (?, ?, ?, ?, ?, 'user', ?, 0)`,
			"ws", fmt.Sprintf("m%05d", m), fmt.Sprintf("s%d", m%5), fmt.Sprintf("s%d-t1", m%5), int64(m+1), fmt.Sprintf("Message %d of session %d", m, m%5))
	}
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	find := func(text string, f forkengine.SessionFilter) []string {
		terms, err := forkengine.ParseSearch(text)
		require.NoError(t, err)
		f.Search = terms
		rows, err := db.ListSessions(ctx, "ws", f, forkengine.PageCursor{}, 0)
		require.NoError(t, err)
		n, err := db.CountSessions(ctx, "ws", f)
		require.NoError(t, err)
		var ids []string
		for _, s := range rows {
			ids = append(ids, s.ID)
		}
		require.Len(t, ids, n, "the count of %q agrees with its page", text)
		return ids
	}
	require.Equal(t, []string{"s0", "s1", "s2", "s3"}, find("billing", forkengine.SessionFilter{}), "titles are indexed")
	require.Equal(t, []string{"s0", "s1", "s2", "s3", "s4"}, find("billing", forkengine.SessionFilter{IncludeDeleted: true}))
	require.Equal(t, []string{"s3"}, find("message 4498", forkengine.SessionFilter{}), "the last page of messages is indexed")
	require.Equal(t, []string{"s2"}, find("7 message", forkengine.SessionFilter{}))
	require.Equal(t, []string{"s4"}, find("4499", forkengine.SessionFilter{IncludeDeleted: true}), "deleted sessions keep their class")
}

func TestSearchBackfillSQLite(t *testing.T) {
	t.Parallel()
	testSearchBackfill(t, sqliteConfig(t))
}

func TestSearchBackfillPostgres(t *testing.T) {
	requirePostgres(t)
	testSearchBackfill(t, postgresConfig(t))
}

// TestSearchPageStatements: a search page is one statement and so is its count, whatever the
// word matches; several words add the one that reads their counts.
func TestSearchPageStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openTest(t, migratedSQLite(t))
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		for i := range 300 {
			s := forkengine.Session{WorkspaceID: "ws", ID: fmt.Sprintf("s%03d", i), Title: "common words here", Visible: true, CreatedAt: at(i)}
			if err := tx.UpsertSession(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}))
	statements := func(fn func() error) int64 {
		before := db.Statements()
		require.NoError(t, fn())
		return db.Statements() - before
	}
	one := forkengine.SessionFilter{Search: []string{"common"}}
	two := forkengine.SessionFilter{Search: []string{"common", "words"}}
	for _, c := range []struct {
		f    forkengine.SessionFilter
		page int64
	}{{one, 1}, {two, 2}} {
		require.Equal(t, c.page, statements(func() error {
			rows, err := db.ListSessions(ctx, "ws", c.f, forkengine.PageCursor{}, 51)
			require.Len(t, rows, 51)
			return err
		}), "a page of %v", c.f.Search)
	}
	require.Equal(t, int64(1), statements(func() error {
		n, err := db.CountSessions(ctx, "ws", one)
		require.Equal(t, 300, n)
		return err
	}), "a one-word count reads the counts")
}

// testSearchCountsFollowRows: the per-word counts that a one-word totalCount reads agree with
// the index rows after every kind of write that changes them: titles given, changed and
// cleared, messages of new and already-said words (in one batch over several sessions), a
// word said in a title and a message, a soft delete, a fork's lineage, a purge. The counts are
// written by addTerms and by triggers (migration 22): this is the check that they add up.
func testSearchCountsFollowRows(t *testing.T, cfg Config) {
	ctx := context.Background()
	db := openTest(t, cfg)
	session := func(id, title string) forkengine.Session {
		return forkengine.Session{WorkspaceID: "ws", ID: id, Kind: forkengine.SessionRoot, Provider: "sim", Title: title, Visible: true, CreatedAt: at(len(id))}
	}
	msg := func(sid, id, text string) forkengine.Message {
		return forkengine.Message{WorkspaceID: "ws", SessionID: sid, TurnID: sid + "-t1", ID: id, Role: forkengine.RoleUser, Content: text}
	}
	write := func(fn func(tx forkengine.Tx) error) { require.NoError(t, db.Update(ctx, fn)) }
	write(func(tx forkengine.Tx) error {
		for _, s := range []forkengine.Session{session("a", "alpha billing"), session("bb", "beta"), session("ccc", "")} {
			if err := tx.UpsertSession(ctx, s); err != nil {
				return err
			}
			if err := tx.UpsertTurn(ctx, forkengine.Turn{WorkspaceID: "ws", SessionID: s.ID, ID: s.ID + "-t1", Sequence: 1,
				Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted}); err != nil {
				return err
			}
		}
		_, err := tx.InsertMessages(ctx, []forkengine.Message{msg("a", "m1", "billing deploy deploy"), msg("bb", "m2", "deploy again"),
			msg("ccc", "m3", "alpha beta"), msg("a", "m4", "again and again")})
		return err
	})
	write(func(tx forkengine.Tx) error {
		if _, err := tx.InsertMessages(ctx, []forkengine.Message{msg("a", "m5", "deploy billing fresh")}); err != nil {
			return err
		}
		if err := tx.UpsertSession(ctx, session("bb", "gamma deploy")); err != nil { // beta leaves the title, deploy joins it
			return err
		}
		if err := tx.UpsertSession(ctx, session("a", "")); err != nil {
			return err
		}
		if err := tx.SoftDeleteSession(ctx, "ws", "ccc", at(9)); err != nil {
			return err
		}
		return tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: "ws", OperationID: "op", SourceSessionID: "a", SourceTurnID: "a-t1", TargetSessionID: "bb"})
	})
	counted := func(query string) map[string]int64 {
		rows, err := db.gorm.Raw(query).Rows()
		require.NoError(t, err)
		defer rows.Close()
		out := map[string]int64{}
		for rows.Next() {
			var term string
			var class, n int64
			require.NoError(t, rows.Scan(&term, &class, &n))
			if n != 0 {
				out[fmt.Sprintf("%s/%d", term, class)] = n
			}
		}
		require.NoError(t, rows.Err())
		return out
	}
	check := func(when string) {
		rows := counted("SELECT term, class, COUNT(*) FROM session_terms GROUP BY term, class")
		require.NotEmpty(t, rows)
		require.Equal(t, rows, counted("SELECT term, class, CAST(SUM(n) AS BIGINT) FROM session_term_counts GROUP BY term, class"), when)
	}
	check("after writes")
	require.Equal(t, map[string]int64{"deploy/2": 1, "deploy/3": 1, "again/2": 1, "again/3": 1}, func() map[string]int64 {
		all := counted("SELECT term, class, CAST(SUM(n) AS BIGINT) FROM session_term_counts WHERE term IN ('deploy', 'again') GROUP BY term, class")
		return all
	}(), "a message word said twice counts its session once; the fork's child left the roots")
	write(func(tx forkengine.Tx) error { return tx.PurgeSession(ctx, "ws", "ccc") })
	check("after a purge")
}

func TestSearchCountsFollowRowsSQLite(t *testing.T) {
	t.Parallel()
	testSearchCountsFollowRows(t, sqliteConfig(t))
}

func TestSearchCountsFollowRowsPostgres(t *testing.T) {
	requirePostgres(t)
	testSearchCountsFollowRows(t, postgresConfig(t))
}
