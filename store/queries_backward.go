package store

import (
	"context"
	"math"
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
	var rows []sessionRow
	db := keysetBefore(filterSessions(q.with(ctx), ws, f), before).Order(newestFirst)
	if err := limit(db, n).Find(&rows).Error; err != nil {
		return nil, classify(err, "list sessions before")
	}
	out := make([]forkengine.Session, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
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
	return "WITH page_ids (id) AS (VALUES " + values + ") SELECT t." + strings.Join(turnColumns, ", t.") + `
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
		var rows []turnRow
		db := q.with(ctx)
		if n > 0 {
			args := make([]any, 0, len(chunk)+6)
			for _, id := range chunk {
				args = append(args, id)
			}
			args = append(args, ws, beforeSequence, ws, beforeSequence, n-1, int64(math.MinInt64))
			db = db.Raw(pagedTurnsBeforeSQL(len(chunk)), args...)
		} else {
			db = db.Where("workspace_id = ? AND session_id IN ? AND sequence < ?", ws, chunk, beforeSequence).
				Order("session_id, sequence DESC")
		}
		if err := db.Find(&rows).Error; err != nil {
			return classify(err, "turns by sessions before")
		}
		for _, r := range rows {
			out[r.SessionID] = append(out[r.SessionID], r.domain())
		}
		return nil
	})
	return out, err
}
