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
