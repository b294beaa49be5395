package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// blocksBoundary reports whether op, the latest operation on its boundary, keeps a new request on that
// boundary from starting a fork of its own. With the barrier on, that is every operation that may
// have produced (or may still produce) a child the client has not adopted: active, unknown, or
// committed and not yet acknowledged. Acknowledging or failing releases the boundary; unknown
// never does, because the provider may hold a child nobody can see.
func blocksBoundary(op OperationState) bool {
	switch {
	case op.Status.Active(), op.Status == StatusUnknown:
		return true
	case op.Status == StatusCommitted:
		return op.AcknowledgedAt == nil
	}
	return false
}

// blockingOperation applies the boundary policy to a new request. With the barrier on, a blocking
// latest operation is returned (found=true) as the answer to the request. With it off, only an
// active operation blocks, and the request fails with a retryable FORK_IN_PROGRESS.
func (e *Engine) blockingOperation(ctx context.Context, r Reader, in ForkInput) (ForkOperation, bool, error) {
	// Only the state decides; the operation is loaded just for the rare answer that returns it.
	latest, err := r.LatestOperationStateOnBoundary(ctx, in.WorkspaceID, in.SourceSessionID, in.ThroughTurnID)
	switch {
	case errors.Is(err, ErrNotFound):
		return ForkOperation{}, false, nil
	case err != nil:
		return ForkOperation{}, false, fmt.Errorf("read latest operation on turn %s: %w", in.ThroughTurnID, err)
	case !e.cfg.DisableBarrier && blocksBoundary(latest):
		full, err := r.GetOperation(ctx, in.WorkspaceID, latest.ID)
		if err != nil {
			return ForkOperation{}, false, readError(err, "fork operation", latest.ID)
		}
		return full, true, nil
	case e.cfg.DisableBarrier && latest.Status.Active():
		return ForkOperation{}, false, &Error{Code: CodeForkInProgress, Retryable: true,
			Message: fmt.Sprintf("fork operation %s is still running on turn %q", latest.ID, in.ThroughTurnID)}
	}
	return ForkOperation{}, false, nil
}

// PendingOperations returns, for each of turns that has one, the operation a new fork request on
// that turn (as a boundary of its session) would get back instead of a fork of its own: with the
// barrier on, an active, unknown, or committed-but-unacknowledged latest operation; with it off,
// an active one. A client shows it on the turn instead of a button that silently returns it. One
// store read for all the turns.
func (e *Engine) PendingOperations(ctx context.Context, workspaceID string, turns []Turn) (map[string]ForkOperation, error) {
	boundaries := make([]Boundary, len(turns))
	for i, t := range turns {
		boundaries[i] = Boundary{SessionID: t.SessionID, TurnID: t.ID}
	}
	latest, err := e.store.LatestOperationsOnBoundaries(ctx, workspaceID, boundaries)
	if err != nil {
		return nil, fmt.Errorf("read the latest operations of %d turns: %w", len(turns), err)
	}
	out := map[string]ForkOperation{}
	for b, op := range latest {
		if (e.cfg.DisableBarrier && op.Status.Active()) || (!e.cfg.DisableBarrier && blocksBoundary(op.State())) {
			out[b.TurnID] = op
		}
	}
	return out, nil
}
