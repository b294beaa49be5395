package store

import (
	"strings"
)

// The per-session turn reads (a page of turns, the latest turn, the active turn) take a batch of
// sessions in one statement and must cost the same for a session of four turns as for one of a
// hundred thousand. Numbering every turn of each session with ROW_NUMBER() and keeping the first
// few read every turn; instead the ids become a small table (a CTE of VALUES) joined to turns,
// and each session's rows are found by seeks on (workspace_id, session_id, sequence): the unique
// index turns_sequence_per_session, or turns_unsettled for the active turn. The join must run
// with the ids outside and one seek per id whatever the statistics say, and the two databases
// need different SQL for that:
//   - SQLite keeps a CROSS JOIN's order as written, and has no LATERAL: the turns are joined
//     directly, a page bounded by a correlated subquery that finds its last sequence.
//   - PostgreSQL reorders a plain join by its estimates: on a workspace whose sessions are mostly
//     short it hashed the ids against every turn of the workspace past the cursor. A LATERAL
//     subquery with ORDER BY … LIMIT cannot be flattened into the join, so it is one ordered
//     index seek per id, reading at most the page.

// qualifiedTurnSelectList is turnSelectList with every column of the turns table aliased t.
var qualifiedTurnSelectList = turnsTable.list("t.")

// idsCTE is "WITH ids (id) AS (VALUES (?), ...)" for n ids. The first value is cast so that
// PostgreSQL types the column as TEXT rather than guessing from untyped parameters. On SQLite
// the ids are one JSON array (idList): "WITH ids (id) AS (SELECT value FROM json_each(?))".
func idsCTE(d dialect, n int) string {
	if d.jsonIDLists {
		return "WITH ids (id) AS (SELECT value FROM json_each(?)) "
	}
	var b strings.Builder
	b.WriteString("WITH ids (id) AS (VALUES (CAST(? AS TEXT))")
	for range n - 1 {
		b.WriteString(", (?)")
	}
	b.WriteString(") ")
	return b.String()
}

// idArgs is ids as the arguments of idsCTE, followed by rest.
func idArgs(d dialect, ids []string, rest ...any) []any {
	if d.jsonIDLists {
		return append([]any{idList(ids)}, rest...)
	}
	args := make([]any, 0, len(ids)+len(rest))
	for _, id := range ids {
		args = append(args, id)
	}
	return append(args, rest...)
}

// lastTurnSQL selects, per id, the turn whose sequence is the highest among the session's turns
// the extra condition (on alias m for SQLite, t for PostgreSQL; see unsettled) keeps: a seek
// backwards from the end of the index. It selects every column but workspace_id
// (eachOfWorkspace). Arguments: the ids, then lastTurnArgs. On SQLite the seek's index entry
// carries the turn's rowid, and the row is read by it: one b-tree search by integer per turn
// instead of a second search of the index by (workspace, session, sequence): a sixth less CPU
// for the read (BenchmarkListQueryReads/LatestTurns).
func lastTurnSQL(d dialect, n int, extra turnCondition) string {
	if d.lateralJoins {
		return idsCTE(d, n) + "SELECT " + qualifiedTurnsOfWorkspace + ` FROM ids CROSS JOIN LATERAL (
	SELECT * FROM turns t WHERE t.workspace_id = ? AND t.session_id = ids.id` + extra.on("t") + `
	ORDER BY t.sequence DESC LIMIT 1) t`
	}
	return idsCTE(d, n) + "SELECT " + qualifiedTurnsOfWorkspace + ` FROM ids CROSS JOIN turns t
	WHERE t.rowid = (
		SELECT m.rowid FROM turns m WHERE m.workspace_id = ? AND m.session_id = ids.id` + extra.on("m") + `
		ORDER BY m.sequence DESC LIMIT 1)`
}

// lastTurnArgs are lastTurnSQL's arguments.
func lastTurnArgs(d dialect, ids []string, ws string) []any {
	if d.lateralJoins {
		return idArgs(d, ids, ws)
	}
	return idArgs(d, ids, ws)
}

// turnCondition is an extra condition on the turns a per-session read keeps, written with %s for
// the table's alias.
type turnCondition string

const (
	noExtra   turnCondition = ""
	unsettled turnCondition = " AND %s.phase <> 'settled'" // the condition of the partial index turns_unsettled
)

// on is the condition on the table aliased alias.
func (c turnCondition) on(alias string) string {
	return strings.ReplaceAll(string(c), "%s", alias)
}

// maxSequence bounds a page that runs to the end of its session.
const maxSequence = int64(1<<63 - 1)
