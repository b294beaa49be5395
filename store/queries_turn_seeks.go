package store

import (
	"strings"
)

// The per-session turn reads (a page of turns, the latest turn, the active turn) take a batch of
// sessions in one statement and must cost the same for a session of four turns as for one of a
// hundred thousand. Numbering every turn of each session with ROW_NUMBER() and keeping the first
// few read every turn; instead the ids become a small table (a CTE of VALUES) joined to turns,
// and each session's rows are found by seeks on (workspace_id, session_id, sequence): the unique
// index turns_sequence_per_session, or turns_unsettled for the active turn. Both SQLite and
// PostgreSQL run the join with the ids outside and one correlated seek per id (SQLite keeps a
// CROSS JOIN's order as written).

// qualifiedTurnSelectList is turnSelectList with every column of the turns table aliased t.
var qualifiedTurnSelectList = "t." + strings.Join(turnColumns, ", t.")

// idsCTE is "WITH ids (id) AS (VALUES (?), ...)" for n ids. The first value is cast so that
// PostgreSQL types the column as TEXT rather than guessing from untyped parameters.
func idsCTE(n int) string {
	var b strings.Builder
	b.WriteString("WITH ids (id) AS (VALUES (CAST(? AS TEXT))")
	for range n - 1 {
		b.WriteString(", (?)")
	}
	b.WriteString(") ")
	return b.String()
}

// idArgs is ids as arguments, followed by rest.
func idArgs(ids []string, rest ...any) []any {
	args := make([]any, 0, len(ids)+len(rest))
	for _, id := range ids {
		args = append(args, id)
	}
	return append(args, rest...)
}

// lastTurnSQL selects, per id, the turn whose sequence is the highest among the session's turns
// the extra condition keeps: one seek backwards from the end of the index for the sequence, one
// seek for its row. It selects every column but workspace_id (eachRowOfWorkspace). Arguments: the
// ids, then the workspace twice.
func lastTurnSQL(n int, extra string) string {
	return idsCTE(n) + "SELECT " + qualifiedTurnsOfWorkspace + ` FROM ids CROSS JOIN turns t
	WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence = (
		SELECT m.sequence FROM turns m WHERE m.workspace_id = ? AND m.session_id = ids.id` + extra + `
		ORDER BY m.sequence DESC LIMIT 1)`
}

const (
	noExtra   = ""
	unsettled = " AND m.phase <> 'settled'" // the condition of the partial index turns_unsettled
)

// pagedTurnsSQL selects, per id, up to n turns with sequence > after: the correlated subquery
// walks n entries of the index to the page's last sequence (none when the session has fewer:
// then the page runs to the end), and the outer seek reads the range. Arguments: the ids, then
// workspace, after, workspace, after, n-1, maxSequence.
func pagedTurnsSQL(ids int) string {
	return idsCTE(ids) + "SELECT " + qualifiedTurnSelectList + ` FROM ids CROSS JOIN turns t
	WHERE t.workspace_id = ? AND t.session_id = ids.id AND t.sequence > ? AND t.sequence <= COALESCE((
		SELECT m.sequence FROM turns m WHERE m.workspace_id = ? AND m.session_id = ids.id AND m.sequence > ?
		ORDER BY m.sequence LIMIT 1 OFFSET ?), ?)
	ORDER BY t.session_id, t.sequence`
}

// maxSequence bounds a page that runs to the end of its session.
const maxSequence = int64(1<<63 - 1)
