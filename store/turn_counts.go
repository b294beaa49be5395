package store

import "context"

// turns { totalCount } counted a session's turn rows, a walk of its whole history. Instead
// turn_counts keeps, per session, how many turns it has, and triggers on turns change it in the
// statement (so the transaction) that inserts, deletes or moves a turn: no write path can forget
// it, and a rolled-back write leaves it as it was. A count row that reaches zero stays until the
// session is purged (PurgeSession removes it); a zero reads as no turns.
//
// Unlike session_counts there are no shards on PostgreSQL: a count row is one session's, and the
// engine already serialises the writes of one session (its session lock), so writers of different
// sessions never wait on each other's rows.

var turnCountsDDL = `CREATE TABLE turn_counts (
	workspace_id TEXT   NOT NULL,
	session_id   TEXT   NOT NULL,
	n            BIGINT NOT NULL,
	PRIMARY KEY (workspace_id, session_id)
)`

// turnCountsBackfill counts the turns already stored.
var turnCountsBackfill = turnCountColumns.insertInto() + `
	SELECT workspace_id, session_id, COUNT(*) FROM turns GROUP BY workspace_id, session_id`

// sqliteTurnBumpSQL adds delta to the count of the session named by row (NEW or OLD).
func sqliteTurnBumpSQL(row, delta string) string {
	return turnCountColumns.insertInto() + " VALUES (" + row + ".workspace_id, " + row + ".session_id, " +
		delta + ")" + turnCountColumns.onConflictAdd("n") + ";"
}

// turnMovedSQL: an update that changes which session a turn belongs to (the store's upsert
// writes every column; the engine never moves a turn, the counts stay exact if something does).
const turnMovedSQL = "OLD.workspace_id <> NEW.workspace_id OR OLD.session_id <> NEW.session_id"

// SQLite has only row triggers: a fork's commit of 20 turns runs 20 upserts of one row, each a
// probe of a page the first one brought into the cache.
var sqliteTurnCountTriggers = []string{
	"CREATE TRIGGER turns_counted_insert AFTER INSERT ON turns BEGIN " + sqliteTurnBumpSQL("NEW", "1") + " END",
	"CREATE TRIGGER turns_counted_delete AFTER DELETE ON turns BEGIN " + sqliteTurnBumpSQL("OLD", "-1") + " END",
	"CREATE TRIGGER turns_counted_update AFTER UPDATE OF workspace_id, session_id ON turns WHEN " + turnMovedSQL +
		" BEGIN " + sqliteTurnBumpSQL("OLD", "-1") + "\n" + sqliteTurnBumpSQL("NEW", "1") + " END",
}

// On PostgreSQL inserts and deletes are counted per statement from its transition table, one
// upsert per session the statement touched (a fork's commit: one, for 20 turns). Transition
// tables cannot go with a column list, so the rare move is a row trigger.
var postgresTurnCountTriggers = []string{
	`CREATE OR REPLACE FUNCTION forkgraph_count_turns() RETURNS trigger AS $$
	BEGIN
		IF TG_OP = 'INSERT' THEN
			INSERT INTO turn_counts (workspace_id, session_id, n)
			SELECT workspace_id, session_id, COUNT(*) FROM counted_turns GROUP BY workspace_id, session_id
			ON CONFLICT (workspace_id, session_id) DO UPDATE SET n = turn_counts.n + excluded.n;
		ELSE
			INSERT INTO turn_counts (workspace_id, session_id, n)
			SELECT workspace_id, session_id, -COUNT(*) FROM counted_turns GROUP BY workspace_id, session_id
			ON CONFLICT (workspace_id, session_id) DO UPDATE SET n = turn_counts.n + excluded.n;
		END IF;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER turns_counted_insert AFTER INSERT ON turns REFERENCING NEW TABLE AS counted_turns
		FOR EACH STATEMENT EXECUTE FUNCTION forkgraph_count_turns()`,
	`CREATE TRIGGER turns_counted_delete AFTER DELETE ON turns REFERENCING OLD TABLE AS counted_turns
		FOR EACH STATEMENT EXECUTE FUNCTION forkgraph_count_turns()`,
	`CREATE OR REPLACE FUNCTION forkgraph_move_turn_count() RETURNS trigger AS $$
	BEGIN
		INSERT INTO turn_counts (workspace_id, session_id, n) VALUES (OLD.workspace_id, OLD.session_id, -1)
		ON CONFLICT (workspace_id, session_id) DO UPDATE SET n = turn_counts.n + excluded.n;
		INSERT INTO turn_counts (workspace_id, session_id, n) VALUES (NEW.workspace_id, NEW.session_id, 1)
		ON CONFLICT (workspace_id, session_id) DO UPDATE SET n = turn_counts.n + excluded.n;
		RETURN NULL;
	END $$ LANGUAGE plpgsql`,
	`CREATE TRIGGER turns_counted_update AFTER UPDATE OF workspace_id, session_id ON turns FOR EACH ROW
		WHEN (` + turnMovedSQL + `) EXECUTE FUNCTION forkgraph_move_turn_count()`,
}

// CountTurnsBySessionIDs returns each session's number of turns from turn_counts and its History:
// two primary-key probes per session, however long its history. Sessions without turns are
// absent.
func (q queries) CountTurnsBySessionIDs(ctx context.Context, ws string, sessionIDs []string) (map[string]int, error) {
	out := map[string]int{}
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		rows, err := queryRows[turnCountRow](ctx, q, countTurnsSQL(q.dialect, len(chunk)), idArgs(q.dialect, chunk, ws, ws)...)
		if err != nil {
			return classify(err, "count turns by sessions")
		}
		for _, r := range rows {
			if r.N > 0 {
				out[r.SessionID] = int(r.N)
			}
		}
		return nil
	})
	return out, err
}

// countTurnsSQL reads the counts of n sessions: its own rows' count plus the turns its History
// inherits, two primary-key probes per id (a join with the ids rather than an IN list, which
// PostgreSQL may answer by walking the workspace's range). Arguments: the ids, then the
// workspace twice.
func countTurnsSQL(d dialect, n int) string {
	return idsCTE(d, n) + `SELECT ids.id, COALESCE((SELECT c.n FROM turn_counts c WHERE c.workspace_id = ? AND c.session_id = ids.id), 0)
	+ COALESCE((SELECT h.inherited_turns FROM histories h WHERE h.workspace_id = ? AND h.session_id = ids.id), 0) FROM ids`
}

// purgeTurnCountSQL removes a purged session's count row (its turns are gone, the row says 0).
const purgeTurnCountSQL = `DELETE FROM turn_counts WHERE workspace_id = @ws AND session_id = @id`

// turnCountRow is one row of countTurnsSQL.
type turnCountRow struct {
	SessionID string
	N         int64
}

func (r *turnCountRow) targets() []any { return []any{&r.SessionID, &r.N} }
