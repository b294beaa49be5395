package store

import (
	"context"
	"database/sql"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// queries implements forkengine.Reader over a gorm handle: the pool for DB, the transaction for
// txn. Every batch read is one statement for up to dialect.maxParams ids.
type queries struct {
	db        *gorm.DB
	dialect   dialect
	snapshots *snapshotCache
	// pending, set inside a transaction, holds snapshots decoded or written by it; they reach
	// the shared cache only after the transaction commits.
	pending *[]cachedSnapshot
	// statements counts what execFixed runs past gorm (gorm's callbacks count the rest).
	statements *atomic.Int64
	// rows counts the rows the fixed reads (scanRows) returned; nil counts nothing.
	rows *atomic.Int64
}

// execFixed runs fixed SQL with ? placeholders on db's connection (the transaction inside Update)
// straight through database/sql. gorm's Exec re-scans the SQL and re-boxes every argument, which
// for a fork's 100-row insert cost more CPU than SQLite's own work. It is counted as a statement.
func (q queries) execFixed(db *gorm.DB, query string, args ...any) (sql.Result, error) {
	q.statements.Add(1)
	ctx := db.Statement.Context
	if q.dialect.writesIgnoreCancel {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ctx = context.WithoutCancel(ctx)
	}
	return db.Statement.ConnPool.ExecContext(ctx, q.dialect.placeholders(query), args...)
}

func (q queries) with(ctx context.Context) *gorm.DB { return q.db.WithContext(ctx) }

// inChunks calls fn with the distinct ids split into parameter-sized chunks; no ids, no call.
func (q queries) inChunks(ids []string, fn func(chunk []string) error) error {
	distinct := slices.Compact(slices.Sorted(slices.Values(ids)))
	for chunk := range slices.Chunk(distinct, q.dialect.maxParams) {
		if err := fn(chunk); err != nil {
			return err
		}
	}
	return nil
}

// limitSQL is " LIMIT n" for n > 0, "" (every row) otherwise.
func limitSQL(n int) string {
	if n > 0 {
		return " LIMIT " + strconv.Itoa(n)
	}
	return ""
}

// activeStatuses are the statuses of a moving saga, as in the partial unique index.
var activeStatuses = []string{
	string(forkengine.StatusPrepared), string(forkengine.StatusDispatching), string(forkengine.StatusProviderAccepted),
}

// The condition of the partial index fork_operations_reconcile_due, written as literals (as are
// the others, in operation_classes.go): a planner can use a partial index only when it can prove
// the query implies the index's WHERE, and with the statuses bound as parameters SQLite cannot,
// so it scanned the whole table instead.
const isReconcileDueSQL = "status = 'unknown' AND next_reconcile_at_us IS NOT NULL AND next_reconcile_at_us <= ?"

var getSessionSQL = "SELECT " + sessionSelectList + " FROM sessions WHERE workspace_id = ? AND id = ?"

// GetSession returns one session, or ErrNotFound.
func (q queries) GetSession(ctx context.Context, ws, id string) (forkengine.Session, error) {
	rows, err := queryAll(ctx, q, sessionsTable, getSessionSQL, ws, id)
	if err != nil {
		return forkengine.Session{}, classify(err, "get session %s", id)
	}
	if len(rows) == 0 {
		return forkengine.Session{}, notFound("session", ws, id)
	}
	return rows[0], nil
}

// SessionsByIDs returns the existing sessions among ids, keyed by id.
func (q queries) SessionsByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.Session, error) {
	out := make(map[string]forkengine.Session, len(ids))
	err := q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, sessionsTable, ws, "SELECT "+sessionColumnsOfWorkspace+" FROM sessions WHERE workspace_id = ? AND id IN "+in, args,
			func(s *forkengine.Session) { out[s.ID] = *s })
		return classify(err, "sessions by ids")
	})
	return out, err
}

// ListSessions returns up to limit (<= 0: all) sessions matching f after the cursor, in
// (CreatedAt, ID) order. It is the list query's page read, so it runs fixed SQL scanned by hand
// (sessionFilterSQL) instead of gorm's builder and reflective scanner.
func (q queries) ListSessions(ctx context.Context, ws string, f forkengine.SessionFilter, after forkengine.PageCursor, n int) ([]forkengine.Session, error) {
	if len(f.Search) > 0 {
		page, err := q.searchSessions(ctx, ws, f, after, n, 0, false)
		return page.Sessions, err
	}
	where, args := sessionFilterSQL(ws, f)
	if !after.IsZero() {
		where += " AND (created_at_us, id) > (?, ?)" // see keyset
		args = append(args, micros(after.Time), after.ID)
	}
	query := "SELECT " + sessionColumnsOfWorkspace + " FROM sessions WHERE " + where + " ORDER BY created_at_us, id"
	out := make([]forkengine.Session, 0, min(max(n, 0), 1000)) // not nil: callers tell none from unread
	if n > 0 {
		query += " LIMIT " + strconv.Itoa(n)
	}
	err := eachOfWorkspace(ctx, q, sessionsTable, ws, query, args, func(s *forkengine.Session) { out = append(out, *s) })
	if err != nil {
		return nil, classify(err, "list sessions")
	}
	return out, nil
}

// sessionFilterSQL is the one session filter: its conditions and their arguments, for the list
// query's pages (forward and backward) and the row count.
func sessionFilterSQL(ws string, f forkengine.SessionFilter) (string, []any) {
	conds, args := []string{"workspace_id = ?"}, []any{ws}
	if f.Kind != "" {
		conds, args = append(conds, "kind = ?"), append(args, string(f.Kind))
	}
	if f.Provider != "" {
		conds, args = append(conds, "provider = ?"), append(args, f.Provider)
	}
	if f.Visible != nil {
		conds, args = append(conds, "visible = ?"), append(args, *f.Visible)
	}
	if !f.IncludeDeleted {
		conds = append(conds, "deleted_at_us IS NULL")
	}
	if f.RootsOnly {
		conds = append(conds, `NOT EXISTS (SELECT 1 FROM lineages l
			WHERE l.workspace_id = sessions.workspace_id AND l.target_session_id = sessions.id)`)
	}
	return strings.Join(conds, " AND "), args
}

// countSessionRows counts the sessions matching f row by row: what CountSessions falls back to
// for a filter session_counts does not keep.
func (q queries) countSessionRows(ctx context.Context, ws string, f forkengine.SessionFilter) (int, error) {
	where, args := sessionFilterSQL(ws, f)
	n, err := q.queryInt(ctx, "SELECT COUNT(*) FROM sessions WHERE "+where, args...)
	if err != nil {
		return 0, classify(err, "count sessions")
	}
	return int(n), nil
}
