package store

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// seedSearchPlans writes n sessions with one message each: "alpha" in the even ones, "beta"
// in the odd ones (two words of half the sessions that never meet, the worst case of a
// two-word search), "gamma" in every sixth and "rare" in every 500th.
func seedSearchPlans(t *testing.T, db *DB, n int) {
	ctx := context.Background()
	require.NoError(t, db.BulkLoad(ctx, func(tx forkengine.Tx) error {
		var turns []forkengine.Turn
		var msgs []forkengine.Message
		for i := range n {
			s := forkengine.Session{WorkspaceID: "ws", ID: fmt.Sprintf("s%05d", i), Visible: true, CreatedAt: at(i)}
			if err := tx.UpsertSession(ctx, s); err != nil {
				return err
			}
			turn := forkengine.Turn{WorkspaceID: "ws", SessionID: s.ID, ID: s.ID + "-t", Sequence: 1, Phase: forkengine.PhaseSettled,
				Outcome: forkengine.OutcomeCompleted, StartedAt: at(i), UpdatedAt: at(i)}
			turns = append(turns, turn)
			words := []string{"beta"}
			if i%2 == 0 {
				words = []string{"alpha"}
			}
			if i%6 == 0 {
				words = append(words, "gamma")
			}
			if i%500 == 0 {
				words = append(words, "rare")
			}
			msgs = append(msgs, forkengine.Message{WorkspaceID: "ws", SessionID: s.ID, TurnID: turn.ID, ID: s.ID + "-m",
				Role: forkengine.RoleUser, Content: strings.Join(words, " "), CreatedAt: at(i)})
		}
		if err := tx.InsertTurns(ctx, turns); err != nil {
			return err
		}
		_, err := tx.InsertMessages(ctx, msgs)
		return err
	}))
}

var (
	// planBuffers is the first (top) node's buffer count of an EXPLAIN (ANALYZE, BUFFERS).
	planBuffers = regexp.MustCompile(`Buffers: shared hit=(\d+)(?: read=(\d+))?`)
	// probeLoops is an index scan of session_terms run once per row of an outer side.
	probeLoops = regexp.MustCompile(`Index (?:Only )?Scan using \w+ on session_terms o .*loops=(\d+)\)`)
)

// TestPostgresSearchMergesWords: on PostgreSQL a two-word search reads the other word's rows as
// one ordered range merged with the lead word's (a Merge Join of two index-only scans, migration
// 30 giving the walk its class), not a probe of the key per lead row; a word much denser than
// the lead is still probed, once per lead row. The pages and counts are the ones a probe reads
// (the same sessions, in order, and the same bounded counts). Checked with EXPLAIN (ANALYZE,
// BUFFERS) at 20,000 sessions, where a probe per row would read about 4 buffers for each of
// the lead's 4,000 rows (forkengine.SearchScanRows).
func TestPostgresSearchMergesWords(t *testing.T) {
	requirePostgres(t)
	ctx := context.Background()
	db := openTest(t, postgresConfig(t))
	const n = 20_000
	seedSearchPlans(t, db, n)
	require.NoError(t, db.gorm.Exec("VACUUM ANALYZE session_terms").Error)
	sqlDB, err := db.gorm.DB()
	require.NoError(t, err)
	conn, err := sqlDB.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	analyze := func(q capturedQuery) string {
		rows, err := conn.QueryContext(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q.sql, q.vars...)
		require.NoError(t, err)
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			lines = append(lines, line)
		}
		require.NoError(t, rows.Err())
		return strings.Join(lines, "\n")
	}
	captured := captureSelects(t, db)
	ids := func(p forkengine.SearchPage) []string {
		out := []string{}
		for _, s := range p.Sessions {
			out = append(out, s.ID)
		}
		return out
	}
	// explained runs read and returns the plans of its statements that read session_terms o
	// (the other word's), failing on heap fetches of the index.
	explained := func(read func()) []string {
		captured()
		read()
		var plans []string
		for _, q := range captured() {
			if !strings.Contains(q.sql, "session_terms o") {
				continue
			}
			plan := analyze(q)
			require.Regexp(t, `Index Only Scan (Backward )?using session_terms_pkey on session_terms  `, plan, "the lead's walk is index-only (its class is in the index):\n%s", plan)
			plans = append(plans, plan)
		}
		require.NotEmpty(t, plans)
		return plans
	}
	search := func(text string, cursor forkengine.PageCursor, backward bool) (forkengine.SearchPage, forkengine.SearchCount) {
		terms, err := forkengine.ParseSearch(text)
		require.NoError(t, err)
		f := forkengine.SessionFilter{Search: terms}
		page, err := db.SearchSessions(ctx, "ws", f, cursor, 51, forkengine.SearchScanRows, backward)
		require.NoError(t, err)
		count, err := db.CountSearch(ctx, "ws", f, forkengine.SearchScanRows)
		require.NoError(t, err)
		return page, count
	}

	bounded := forkengine.SearchCount{N: 0, LowerBound: true}
	gammas := forkengine.SearchCount{N: (n + 5) / 6}
	t.Run("Merged", func(t *testing.T) {
		for _, c := range []struct {
			text     string
			cursor   forkengine.PageCursor
			backward bool
			want     []string
			count    forkengine.SearchCount
		}{
			// alpha and beta have 10,000 rows each: the reads stop at the bound, the count is a
			// lower bound.
			{text: "alpha beta", want: []string{}, count: bounded},
			{text: "alpha beta", cursor: forkengine.PageCursor{Time: at(1000), ID: "s01000"}, want: []string{}, count: bounded},
			{text: "alpha beta", backward: true, want: []string{}, count: bounded},
			// gamma (3,334 rows) leads and is in even sessions only.
			{text: "alpha gamma", want: everyNth(0, n, 6, 51), count: gammas},
			{text: "alpha gamma", cursor: forkengine.PageCursor{Time: at(n - 300), ID: fmt.Sprintf("s%05d", n-300)},
				want: everyNth(n-300+6-(n-300)%6, n, 6, 51), count: gammas},
			{text: "gamma alpha", backward: true, want: reversed(everyNth(0, n, 6, n))[:51], count: gammas},
		} {
			var page forkengine.SearchPage
			var count forkengine.SearchCount
			plans := explained(func() { page, count = search(c.text, c.cursor, c.backward) })
			require.Equal(t, c.want, ids(page), "%q from %v", c.text, c.cursor)
			require.Equal(t, c.count, count, "%q", c.text)
			for _, plan := range plans {
				require.Regexp(t, `Merge (Semi )?Join|Hash (Semi )?Join`, plan, "%q: the other word is merged:\n%s", c.text, plan)
				for _, m := range probeLoops.FindAllStringSubmatch(plan, -1) {
					loops, _ := strconv.Atoi(m[1])
					require.LessOrEqual(t, loops, 1, "%q: no probe per row:\n%s", c.text, plan)
				}
				b := planBuffers.FindStringSubmatch(plan)
				require.NotNil(t, b, plan)
				hit, _ := strconv.Atoi(b[1])
				read, _ := strconv.Atoi("0" + b[2])
				// 4,000 lead rows probed would be about 16,000 buffers; the two ranges are a few
				// dozen pages each, and a page's 51 sessions about 150.
				require.Less(t, hit+read, 600, "%q: buffers of the statement:\n%s", c.text, plan)
				t.Logf("%q: %d buffers\n%s", c.text, hit+read, plan)
			}
		}
	})

	t.Run("DenseWordProbed", func(t *testing.T) {
		// "rare" has 40 rows and "alpha" 10,000: reading alpha's range across rare's would be
		// 250 times rare's rows; 40 probes are cheaper.
		var page forkengine.SearchPage
		var count forkengine.SearchCount
		plans := explained(func() { page, count = search("alpha rare", forkengine.PageCursor{}, false) })
		require.Equal(t, everyNth(0, n, 500, n), ids(page))
		require.Equal(t, forkengine.SearchCount{N: n / 500}, count)
		for _, plan := range plans {
			require.NotContains(t, plan, "Merge", plan)
			require.Regexp(t, probeLoops, plan, "one probe per lead row:\n%s", plan)
		}
	})
}

// everyNth is the ids of sessions from, from+step, ... below n, at most limit of them.
func everyNth(from, n, step, limit int) []string {
	out := []string{}
	for i := from; i < n && len(out) < limit; i += step {
		out = append(out, fmt.Sprintf("s%05d", i))
	}
	return out
}

func reversed(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[len(ids)-1-i] = id
	}
	return out
}

// TestMigrationBelowTheLatestRuns: a step whose version is below the database's latest but not
// recorded runs when the database is opened (migration 30 was merged after 31 and 32, so a
// database written by the binary before it is at 32 without it). Were steps skipped by the
// highest version, the covering key would never be built there.
func TestMigrationBelowTheLatestRuns(t *testing.T) {
	t.Parallel()
	cfg := migratedSQLite(t)
	db, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, db.gorm.Exec("DELETE FROM schema_migrations WHERE version = ?", searchCoveringMigration.version).Error)
	latest, err := schemaVersion(db.gorm)
	require.NoError(t, err)
	require.Greater(t, latest, searchCoveringMigration.version)
	require.NoError(t, db.Close())

	again, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	defer again.Close()
	done, err := appliedVersions(again.gorm)
	require.NoError(t, err)
	require.True(t, done[searchCoveringMigration.version], "migration 30 runs on a database already at %d", latest)
}
