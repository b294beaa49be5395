package resolvers

import (
	"context"
	"errors"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// sessionView loads a session through the response's loaders; a missing one is null.
func (r *Resolver) sessionView(ctx context.Context, ws, id string) (*models.Session, error) {
	s, ok, err := r.loaders(ctx).session(ctx, ws, id)
	if err != nil || !ok {
		return nil, err
	}
	return models.SessionFrom(s, r.relations(ctx)), nil
}

// liveSessionView is sessionView for lineage ends: a soft-deleted session is null too (SPEC §5),
// so a graph drawn from lineages never shows deleted sessions.
func (r *Resolver) liveSessionView(ctx context.Context, ws, id string) (*models.Session, error) {
	s, ok, err := r.loaders(ctx).session(ctx, ws, id)
	if err != nil || !ok || s.Deleted() {
		return nil, err
	}
	return models.SessionFrom(s, r.relations(ctx)), nil
}

// liveTurnView is turnView for lineage ends: a turn of a soft-deleted session is null too.
func (r *Resolver) liveTurnView(ctx context.Context, ws, id string) (*models.Turn, error) {
	l := r.loaders(ctx)
	t, ok, err := l.turn(ctx, ws, id)
	if err != nil || !ok {
		return nil, err
	}
	s, ok, err := l.session(ctx, ws, t.SessionID)
	if err != nil || !ok || s.Deleted() {
		return nil, err
	}
	return models.TurnFrom(t, l.views), nil
}

// turnView loads a turn through the response's loaders; a missing one is null.
func (r *Resolver) turnView(ctx context.Context, ws, id string) (*models.Turn, error) {
	l := r.loaders(ctx)
	return l.views.turnOrNil(l.turn(ctx, ws, id))
}

// pageArgs validates a connection's Relay arguments and decodes the cursor of its direction.
// Errors: BAD_USER_INPUT (invalid_first, invalid_last, conflicting_page_arguments, invalid_cursor).
func pageArgs[C any](first, last *int, after, before *string, scope models.ListScope,
	decode func(*string, models.ListScope) (C, error)) (models.Page, C, error) {
	var cursor C
	page, encoded, err := models.ParsePage(first, last, after, before)
	if err != nil {
		return page, cursor, err
	}
	cursor, err = decode(encoded, scope)
	return page, cursor, err
}

// sessionPage reads a sessions window: page.Size+1 rows from the cursor towards the list's end,
// or towards its start for a backward page. A search examines at most
// r.searchScan index rows (Config.SearchScanRows) and may stop short at a position (SearchPage.Reached).
// A filter no report could match is refused first.
func (r *Resolver) sessionPage(ctx context.Context, ws string, f forkengine.SessionFilter, page models.Page, cursor forkengine.PageCursor) (forkengine.SearchPage, error) {
	if err := f.Check(); err != nil {
		return forkengine.SearchPage{}, err
	}
	if len(f.Search) > 0 {
		return r.engine.Reader().SearchSessions(ctx, ws, f, cursor, page.Size+1, r.searchScan, page.Backward)
	}
	var rows []forkengine.Session
	var err error
	if page.Backward {
		rows, err = r.engine.Reader().ListSessionsBefore(ctx, ws, f, cursor, page.Size+1)
	} else {
		rows, err = r.engine.Reader().ListSessions(ctx, ws, f, cursor, page.Size+1)
	}
	return forkengine.SearchPage{Sessions: rows}, err
}

// operationPage is sessionPage for forkOperations.
func (r *Resolver) operationPage(ctx context.Context, ws string, f forkengine.OperationFilter, page models.Page, cursor forkengine.PageCursor) ([]forkengine.ForkOperation, error) {
	if page.Backward {
		return r.engine.Reader().ListOperationsBefore(ctx, ws, f, cursor, page.Size+1)
	}
	return r.engine.Reader().ListOperations(ctx, ws, f, cursor, page.Size+1)
}

// isNotFound reports a missing row, whether the engine coded it or passed the store's sentinel
// (forkengine.ErrNotFound matches both).
func isNotFound(err error) bool { return errors.Is(err, forkengine.ErrNotFound) }
