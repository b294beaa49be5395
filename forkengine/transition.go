package forkengine

import (
	"context"
	"fmt"
	"time"
)

// moveOperation changes op's status inside tx, as a compare-and-swap on the status op was read
// with. Every status change of the engine goes through here, so the transitions table of
// operation.go is the only authority on legal moves. edit stamps the fields that go with the move.
//
// When another writer moved the operation first, nothing is written and the stored operation is
// returned with moved=false, so the caller continues from whatever state it is in now.
func moveOperation(ctx context.Context, tx Tx, c *changes, op ForkOperation, to OperationStatus,
	edit func(next *ForkOperation, at time.Time)) (ForkOperation, bool, error) {
	if !CanTransition(op.Status, to) {
		return op, false, fmt.Errorf("fork operation %s: illegal transition %s -> %s", op.ID, op.Status, to)
	}
	next := op
	next.Status, next.UpdatedAt = to, c.at
	if edit != nil {
		edit(&next, c.at)
	}
	return swapOperation(ctx, tx, c, op, next)
}

// swapOperation writes next over op as a compare and swap on op's status and lease owner and logs
// it; when another writer got there first it writes nothing and returns the stored operation with
// moved=false. moveOperation uses it for status changes; touch for bookkeeping within one status.
func swapOperation(ctx context.Context, tx Tx, c *changes, op, next ForkOperation) (ForkOperation, bool, error) {
	changed, err := tx.UpdateOperation(ctx, next, op.Status)
	if err != nil {
		return op, false, fmt.Errorf("update fork operation %s (%s -> %s): %w", op.ID, op.Status, next.Status, err)
	}
	if !changed {
		current, err := tx.GetOperation(ctx, op.WorkspaceID, op.ID)
		if err != nil {
			return op, false, readError(err, "fork operation", op.ID)
		}
		return current, false, nil
	}
	c.operation(next)
	return next, true, nil
}

// transition runs moveOperation in a transaction of its own and publishes the change.
func (e *Engine) transition(ctx context.Context, op ForkOperation, to OperationStatus,
	edit func(next *ForkOperation, at time.Time)) (ForkOperation, bool, error) {
	var out ForkOperation
	var moved bool
	err := e.update(ctx, func(tx Tx, c *changes) error {
		var err error
		out, moved, err = moveOperation(ctx, tx, c, op, to, edit)
		return err
	})
	if err != nil {
		return op, false, err
	}
	return out, moved, nil
}

// settle records a terminal outcome other than committed: the error text (made fit to store, as
// it may quote a provider) and the completion time.
func settle(errText string) func(*ForkOperation, time.Time) {
	errText = cleanProviderText(errText)
	return func(op *ForkOperation, at time.Time) {
		op.Error = errText
		op.CompletedAt = &at
	}
}
