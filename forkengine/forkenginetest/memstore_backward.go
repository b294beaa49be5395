package forkenginetest

import (
	"context"
	"slices"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The backward readers of a Relay `last`/`before` page: the rows nearest the cursor first, so a
// limit keeps the ones closest to it, as the SQL stores' descending reads do.

// beforeKey reports whether (t, id) sorts strictly before the cursor; the zero cursor is the end.
func beforeKey(c forkengine.PageCursor, t time.Time, id string) bool {
	if c.IsZero() {
		return true
	}
	return compareKey(t, id, c.Time, c.ID) < 0
}

// ListSessionsBefore pages sessions backward: descending (CreatedAt, ID), strictly before before.
func (v memView) ListSessionsBefore(_ context.Context, ws string, f forkengine.SessionFilter, before forkengine.PageCursor, limit int) ([]forkengine.Session, error) {
	var out []forkengine.Session
	for _, s := range v.filteredSessions(ws, f) {
		if beforeKey(before, s.CreatedAt, s.ID) {
			out = append(out, s.Clone())
		}
	}
	slices.SortFunc(out, func(a, b forkengine.Session) int { return compareKey(b.CreatedAt, b.ID, a.CreatedAt, a.ID) })
	return limited(out, limit), nil
}

// ListOperationsBefore pages operations backward: descending (CreatedAt, ID), strictly before
// before.
func (v memView) ListOperationsBefore(_ context.Context, ws string, f forkengine.OperationFilter, before forkengine.PageCursor, limit int) ([]forkengine.ForkOperation, error) {
	ops := v.operationsWhere(ws, func(op forkengine.ForkOperation) bool {
		return operationMatches(f, op) && beforeKey(before, op.CreatedAt, op.ID)
	})
	slices.Reverse(ops)
	return limited(ops, limit), nil
}

// TurnsBySessionIDsBefore returns per session up to limit turns before beforeSequence (<= 0: no
// bound), highest sequence first.
func (v memView) TurnsBySessionIDsBefore(_ context.Context, ws string, sessionIDs []string, beforeSequence int64, limit int) (map[string][]forkengine.Turn, error) {
	out := map[string][]forkengine.Turn{}
	for sid, turns := range v.turnsBySession(ws, sessionIDs) {
		var page []forkengine.Turn
		for _, t := range slices.Backward(turns) {
			if beforeSequence <= 0 || t.Sequence < beforeSequence {
				page = append(page, t.Clone())
			}
		}
		if len(page) > 0 {
			out[sid] = limited(page, limit)
		}
	}
	return out, nil
}
