package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// reservation returns the operation that holds id as a fork target (any operation that has not
// failed), and whether there is one. A committed holder has already created its target; an active
// or unknown one has not, and keeps the id from being reported, deleted or forked into.
func reservation(ctx context.Context, r Reader, workspaceID, id string) (ForkOperation, bool, error) {
	op, err := r.OperationReservingTarget(ctx, workspaceID, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return ForkOperation{}, false, nil
	case err != nil:
		return ForkOperation{}, false, fmt.Errorf("read reservation of %s: %w", id, err)
	}
	return op, true, nil
}
