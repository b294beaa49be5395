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
	return models.SessionFrom(s), nil
}

// liveSessionView is sessionView for lineage ends: a soft-deleted session is null too (SPEC §5),
// so a graph drawn from lineages never shows deleted sessions.
func (r *Resolver) liveSessionView(ctx context.Context, ws, id string) (*models.Session, error) {
	s, ok, err := r.loaders(ctx).session(ctx, ws, id)
	if err != nil || !ok || s.Deleted() {
		return nil, err
	}
	return models.SessionFrom(s), nil
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
	return models.TurnFrom(t), nil
}

// turnView loads a turn through the response's loaders; a missing one is null.
func (r *Resolver) turnView(ctx context.Context, ws, id string) (*models.Turn, error) {
	return turnOrNil(r.loaders(ctx).turn(ctx, ws, id))
}

func turnOrNil(t forkengine.Turn, ok bool, err error) (*models.Turn, error) {
	if err != nil || !ok {
		return nil, err
	}
	return models.TurnFrom(t), nil
}

// pageArgs validates a connection's first and after. Errors: BAD_USER_INPUT (invalid_first,
// invalid_cursor).
func pageArgs[C any](first *int, after *string, decode func(*string) (C, error)) (int, C, error) {
	var cursor C
	limit, err := models.PageSize(first)
	if err != nil {
		return 0, cursor, err
	}
	cursor, err = decode(after)
	return limit, cursor, err
}

// isNotFound reports a missing row, whether the engine coded it or passed the store's sentinel.
func isNotFound(err error) bool {
	return err != nil && (forkengine.ErrorCode(err) == forkengine.CodeNotFound || errors.Is(err, forkengine.ErrNotFound))
}
