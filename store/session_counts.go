package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// sessions { totalCount } counted every matching row, a walk of the whole workspace. Instead
// session_counts keeps, per workspace, how many sessions fall in each of eight classes, and
// triggers on sessions and lineages change it in the statement (so the transaction) that
// changes a session's class; no write path can forget it. A class is three bits:
//
//	4: soft-deleted       2: visible       1: a root (no lineage names it as target)
//
// A filter that narrows only by visibility, deletion and roots-only is a sum over the classes
// it keeps: O(1). A filter on kind or provider still counts rows (countSessionRows).
//
// The root bit is read when a session row or a lineage row is written, so the counts are exact
// when a lineage is written in the transaction that writes its target session, or after that one
// committed (a fork's commit writes both in one transaction).

// sessionBaseClassSQL is the deleted and visible bits of the session row named by alias.
func sessionBaseClassSQL(alias string) string {
	return "(CASE WHEN " + alias + ".deleted_at_us IS NULL THEN 0 ELSE 4 END + CASE WHEN " + alias + ".visible THEN 2 ELSE 0 END)"
}

// sessionClassSQL is the whole class of the session row named by alias, the root bit read from
// lineages as they are when it runs.
func sessionClassSQL(alias string) string {
	return "(" + sessionBaseClassSQL(alias) + " + CASE WHEN EXISTS (SELECT 1 FROM lineages l WHERE l.workspace_id = " +
		alias + ".workspace_id AND l.target_session_id = " + alias + ".id) THEN 0 ELSE 1 END)"
}

var sessionCountsDDL = `CREATE TABLE session_counts (
	workspace_id TEXT   NOT NULL,
	class        BIGINT NOT NULL,
	shard        BIGINT NOT NULL,
	n            BIGINT NOT NULL,
	PRIMARY KEY (workspace_id, class, shard)
)`

// sessionCountsBackfill counts the sessions already stored.
var sessionCountsBackfill = sessionCountsTable.insertInto() + `
	SELECT workspace_id, class, 0, COUNT(*) FROM (SELECT s.workspace_id, ` + sessionClassSQL("s") + ` AS class FROM sessions s) c
	GROUP BY workspace_id, class`

// A lineage's insert makes its target (if stored yet) a non-root; its delete, a root again. A
// session class changes only with deleted_at_us or visible, so other updates leave it alone.
const sessionClassChangedSQL = "(OLD.deleted_at_us IS NULL) <> (NEW.deleted_at_us IS NULL) OR OLD.visible <> NEW.visible"

// sqliteBumpSQL adds delta to the count of class in the row's workspace.
func sqliteBumpSQL(ws, class, delta string) string {
	return sessionCountsTable.insertInto() + " VALUES (" + ws + ", " + class + ", 0, " + delta + ")" +
		sessionCountsTable.onConflictAdd("n") + ";"
}

// sqliteMoveSQL moves the lineage's target session, if stored, from one root bit to the other.
func sqliteMoveSQL(row string, fromRoot, toRoot int) string {
	move := func(root, delta int) string {
		return sessionCountsTable.insertInto() + " SELECT s.workspace_id, " + sessionBaseClassSQL("s") +
			" + " + strconv.Itoa(root) + ", 0, " + strconv.Itoa(delta) + " FROM sessions s WHERE s.workspace_id = " + row +
			".workspace_id AND s.id = " + row + ".target_session_id" + sessionCountsTable.onConflictAdd("n") + ";"
	}
	return move(fromRoot, -1) + "\n" + move(toRoot, 1)
}

var sqliteSessionCountTriggers = []string{
	"CREATE TRIGGER sessions_counted_insert AFTER INSERT ON sessions BEGIN " +
		sqliteBumpSQL("NEW.workspace_id", sessionClassSQL("NEW"), "1") + " END",
	"CREATE TRIGGER sessions_counted_delete AFTER DELETE ON sessions BEGIN " +
		sqliteBumpSQL("OLD.workspace_id", sessionClassSQL("OLD"), "-1") + " END",
	"CREATE TRIGGER sessions_counted_update AFTER UPDATE OF deleted_at_us, visible ON sessions WHEN " +
		sessionClassChangedSQL + " BEGIN " + sqliteBumpSQL("OLD.workspace_id", sessionClassSQL("OLD"), "-1") + "\n" +
		sqliteBumpSQL("NEW.workspace_id", sessionClassSQL("NEW"), "1") + " END",
	"CREATE TRIGGER lineages_counted_insert AFTER INSERT ON lineages BEGIN " + sqliteMoveSQL("NEW", 1, 0) + " END",
	"CREATE TRIGGER lineages_counted_delete AFTER DELETE ON lineages BEGIN " + sqliteMoveSQL("OLD", 0, 1) + " END",
}

// On PostgreSQL the same rules are plpgsql trigger functions; unqualified names resolve through
// the connection's search_path, as the tables' do. Writers there run side by side, and a count
// row a transaction changed stays locked until it commits, so each connection counts into a shard
// of its own (its backend pid modulo 16): concurrent writers to one workspace rarely wait on each
// other's count rows. A shard's count may go below zero (a session counted in one shard and
// uncounted in another); only the sum over the shards means anything. SQLite has one writer, so
// it keeps shard 0.
var postgresSessionCountTriggers = []string{
	`CREATE OR REPLACE FUNCTION forkgraph_bump_session_count(p_ws TEXT, p_class BIGINT, p_delta BIGINT) RETURNS void AS $$
	BEGIN
		INSERT INTO session_counts (workspace_id, class, shard, n) VALUES (p_ws, p_class, pg_backend_pid() % 16, p_delta)
		ON CONFLICT (workspace_id, class, shard) DO UPDATE SET n = session_counts.n + excluded.n;
	END $$ LANGUAGE plpgsql`,
	`CREATE OR REPLACE FUNCTION forkgraph_count_sessions() RETURNS trigger AS $$
	BEGIN
		IF TG_OP <> 'INSERT' THEN
			PERFORM forkgraph_bump_session_count(OLD.workspace_id, ` + sessionClassSQL("OLD") + `, -1);
		END IF;
		IF TG_OP <> 'DELETE' THEN
			PERFORM forkgraph_bump_session_count(NEW.workspace_id, ` + sessionClassSQL("NEW") + `, 1);
		END IF;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER sessions_counted AFTER INSERT OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION forkgraph_count_sessions()`,
	`CREATE TRIGGER sessions_recounted AFTER UPDATE OF deleted_at_us, visible ON sessions FOR EACH ROW
		WHEN (` + sessionClassChangedSQL + `) EXECUTE FUNCTION forkgraph_count_sessions()`,
	`CREATE OR REPLACE FUNCTION forkgraph_count_lineages() RETURNS trigger AS $$
	BEGIN
		IF TG_OP = 'INSERT' THEN
			PERFORM forkgraph_bump_session_count(s.workspace_id, ` + sessionBaseClassSQL("s") + ` + 1, -1),
				forkgraph_bump_session_count(s.workspace_id, ` + sessionBaseClassSQL("s") + `, 1)
			FROM sessions s WHERE s.workspace_id = NEW.workspace_id AND s.id = NEW.target_session_id;
		ELSE
			PERFORM forkgraph_bump_session_count(s.workspace_id, ` + sessionBaseClassSQL("s") + `, -1),
				forkgraph_bump_session_count(s.workspace_id, ` + sessionBaseClassSQL("s") + ` + 1, 1)
			FROM sessions s WHERE s.workspace_id = OLD.workspace_id AND s.id = OLD.target_session_id;
		END IF;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER lineages_counted AFTER INSERT OR DELETE ON lineages FOR EACH ROW EXECUTE FUNCTION forkgraph_count_lineages()`,
}

// countedClasses lists the classes whose counts add up to f's count, or reports false when f
// narrows by kind or provider, which session_counts does not keep.
func countedClasses(f forkengine.SessionFilter) ([]string, bool) {
	if f.Kind != "" || f.Provider != "" {
		return nil, false
	}
	return filterClasses(f), true
}

// CountSessions counts the sessions matching f: from session_counts, O(1), unless f narrows by
// kind or provider; then by counting the matching rows. A search counts from its index (search.go).
func (q queries) CountSessions(ctx context.Context, ws string, f forkengine.SessionFilter) (int, error) {
	if len(f.Search) > 0 {
		return q.countSearch(ctx, ws, f)
	}
	classes, ok := countedClasses(f)
	if !ok {
		return q.countSessionRows(ctx, ws, f)
	}
	n, err := q.queryInt(ctx, countSessionsSQL(classes), ws)
	if err != nil {
		return 0, classify(err, "count sessions")
	}
	return int(n), nil
}

// countSessionsSQL sums the counts of classes, every shard, in one workspace (argument: the
// workspace): at most 8 × 16 rows of one index range. The
// classes are digits the code chose, so they are written into the SQL: one text per filter
// shape, each prepared once.
func countSessionsSQL(classes []string) string {
	return "SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM session_counts WHERE workspace_id = ? AND class IN (" +
		strings.Join(classes, ", ") + ")"
}
