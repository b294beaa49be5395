package store

import (
	"context"
	"strconv"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The backward readers of a Relay `last`/`before` page. They read in descending key order so the
// limit keeps the rows nearest the cursor, and the same indexes serve them as the forward reads
// (scanned backwards). The predicate is the row-value form `(created_at_us, id) < (?, ?)`, which
// SQLite (3.15+) and PostgreSQL both compare lexicographically, as the forward keyset does with `>`.

// beforeSQL adds "strictly before (time, id)" to a fixed WHERE (afterSQL's mirror); the zero
// cursor is the end.
func beforeSQL(where string, args []any, before forkengine.PageCursor) (string, []any) {
	if before.IsZero() {
		return where, args
	}
	return where + " AND (created_at_us, id) < (?, ?)", append(args, micros(before.Time), before.ID)
}

const newestFirst = "created_at_us DESC, id DESC"

// ListSessionsBefore returns up to limit (<= 0: all) sessions matching f strictly before the
// cursor, newest first.
func (q queries) ListSessionsBefore(ctx context.Context, ws string, f forkengine.SessionFilter, before forkengine.PageCursor, n int) ([]forkengine.Session, error) {
	if len(f.Search) > 0 {
		page, err := q.searchSessions(ctx, ws, f, before, n, 0, true)
		return page.Sessions, err
	}
	where, args := sessionFilterSQL(ws, f)
	where, args = beforeSQL(where, args, before)
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
	where, args := operationFilterSQL(ws, f)
	where, args = beforeSQL(where, args, before)
	return q.operations(ctx, "list operations before", where+" ORDER BY "+newestFirst+limitSQL(n), args...)
}

// TurnsBySessionIDsBefore returns, per session, up to limit (<= 0: all) turns with Sequence <
// beforeSequence (<= 0: no bound), highest sequence first, inherited ones included. Sessions
// without such turns are absent. One statement per chunk of sessions, at any fork depth.
func (q queries) TurnsBySessionIDsBefore(ctx context.Context, ws string, sessionIDs []string, beforeSequence int64, n int) (map[string][]forkengine.Turn, error) {
	upTo := maxSequence
	if beforeSequence > 0 {
		upTo = beforeSequence - 1
	}
	out := map[string][]forkengine.Turn{}
	err := q.readTurnSpans(ctx, ws, sessionIDs, n, true, func(chunk []string) (string, []any) {
		return turnsBeforeSQL(q.dialect, len(chunk), n, false), turnsBeforeArgs(q.dialect, chunk, ws, upTo, n, false)
	}, out)
	return out, err
}
