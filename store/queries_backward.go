package store

import (
	"context"
	"math"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The backward readers of a Relay `last`/`before` page. They read in descending key order so the
// limit keeps the rows nearest the cursor, and the same indexes serve them as the forward reads
// (scanned backwards). The predicate is the row-value form `(created_at_us, id) < (?, ?)`, which
// SQLite (3.15+) and PostgreSQL both compare lexicographically, as the forward keyset does with `>`.

// keysetBefore adds "strictly before (time, id)" to a query; the zero cursor is the end.
func keysetBefore(db *gorm.DB, before forkengine.PageCursor) *gorm.DB {
	if before.IsZero() {
		return db
	}
	return db.Where("(created_at_us, id) < (?, ?)", micros(before.Time), before.ID)
}

const newestFirst = "created_at_us DESC, id DESC"

// ListSessionsBefore returns up to limit (<= 0: all) sessions matching f strictly before the
// cursor, newest first.
func (q queries) ListSessionsBefore(ctx context.Context, ws string, f forkengine.SessionFilter, before forkengine.PageCursor, n int) ([]forkengine.Session, error) {
	where, args := sessionFilterSQL(ws, f)
	if !before.IsZero() {
		where += " AND (created_at_us, id) < (?, ?)" // see keysetBefore
		args = append(args, micros(before.Time), before.ID)
	}
	query := "SELECT " + sessionColumnsOfWorkspace + " FROM sessions WHERE " + where + " ORDER BY " + newestFirst
	if n > 0 {
		query += " LIMIT " + strconv.Itoa(n)
	}
	out := []forkengine.Session{}
	err := eachOfWorkspace(ctx, q, sessionsTable, ws, query, args, func(s *forkengine.Session) { out = append(out, *s) })
	if err != nil {
		return nil, classify(err, "list sessions before")
	}
	return out, nil
}

// ListOperationsBefore returns up to limit (<= 0: all) operations matching f strictly before
// the cursor, newest first.
func (q queries) ListOperationsBefore(ctx context.Context, ws string, f forkengine.OperationFilter, before forkengine.PageCursor, n int) ([]forkengine.ForkOperation, error) {
	db := keysetBefore(filterOperations(q.with(ctx), ws, f), before).Order(newestFirst)
	return q.findOperations(limit(db, n), "list operations before")
}

// pagedTurnsBeforeSQL selects, per session id, up to n turns with sequence < before, and costs
// the same for a session of four turns as for one of a hundred thousand: the ids are a small
// table (a CTE of VALUES) outside the join, the correlated subquery walks n entries of the unique
// index (workspace_id, session_id, sequence) backwards from the cursor to the page's first
// sequence (none when fewer precede: then the page runs to the start), and the outer seek reads
// that range. ROW_NUMBER() over each session would number every turn before the cursor. The
// first value is cast so that PostgreSQL types the column as TEXT. Arguments: the ids, then
// workspace, before, workspace, before, n-1, math.MinInt64.
func pagedTurnsBeforeSQL(ids int) string {
	values := "(CAST(? AS TEXT))" + strings.Repeat(", (?)", ids-1)
	return "WITH page_ids (id) AS (VALUES " + values + ") SELECT " + qualifiedTurnSelectList + `
	FROM page_ids CROSS JOIN turns t
	WHERE t.workspace_id = ? AND t.session_id = page_ids.id AND t.sequence < ? AND t.sequence >= COALESCE((
		SELECT m.sequence FROM turns m WHERE m.workspace_id = ? AND m.session_id = page_ids.id AND m.sequence < ?
		ORDER BY m.sequence DESC LIMIT 1 OFFSET ?), ?)
	ORDER BY t.session_id, t.sequence DESC`
}

// TurnsBySessionIDsBefore returns, per session, up to limit (<= 0: all) turns with Sequence <
// beforeSequence (<= 0: no bound), highest sequence first. Sessions without such turns are absent.
func (q queries) TurnsBySessionIDsBefore(ctx context.Context, ws string, sessionIDs []string, beforeSequence int64, n int) (map[string][]forkengine.Turn, error) {
	if beforeSequence <= 0 {
		beforeSequence = math.MaxInt64
	}
	out := map[string][]forkengine.Turn{}
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		var query string
		var args []any
		if n > 0 {
			args = make([]any, 0, len(chunk)+6)
			for _, id := range chunk {
				args = append(args, id)
			}
			args = append(args, ws, beforeSequence, ws, beforeSequence, n-1, int64(math.MinInt64))
			query = pagedTurnsBeforeSQL(len(chunk))
		} else {
			var in string
			in, args = q.inList(chunk, ws)
			query = "SELECT " + turnSelectList + " FROM turns WHERE workspace_id = ? AND session_id IN " + in +
				" AND sequence < ? ORDER BY session_id, sequence DESC"
			args = append(args, beforeSequence)
		}
		err := eachOf(ctx, q, turnsTable, query, args, func(t *forkengine.Turn) { out[t.SessionID] = append(out[t.SessionID], *t) })
		return classify(err, "turns by sessions before")
	})
	return out, err
}
