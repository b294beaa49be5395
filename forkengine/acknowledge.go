package forkengine

import (
	"context"
	"fmt"
)

// Acknowledge records that a client has seen and adopted a committed fork. The first call stamps
// AcknowledgedAt and AcknowledgedBy (by: the caller's subject, "" when unknown) and emits an
// event; later calls return the operation unchanged, by whoever they come. Acknowledging
// releases the barrier on the operation's boundary, so a new request there makes a new fork.
// Errors: BAD_USER_INPUT (ids), NOT_FOUND, ACKNOWLEDGE_CONFLICT (the operation is not committed).
func (e *Engine) Acknowledge(ctx context.Context, workspaceID, id, by string) (ForkOperation, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"id", &id}); err != nil {
		return ForkOperation{}, err
	}
	var out ForkOperation
	err := e.update(ctx, func(tx Tx, c *changes) error {
		var err error
		out, err = acknowledge(ctx, tx, c, workspaceID, id, by)
		return err
	})
	if err != nil {
		return ForkOperation{}, fmt.Errorf("acknowledge fork operation %s: %w", id, err)
	}
	return out, nil
}

// acknowledge stamps the first acknowledgement inside tx. It is not a status change (committed
// stays committed), so it needs no transition; the compare-and-swap on committed still keeps two
// concurrent first acknowledgements from both stamping.
func acknowledge(ctx context.Context, tx Tx, c *changes, workspaceID, id, by string) (ForkOperation, error) {
	op, err := tx.GetOperation(ctx, workspaceID, id)
	switch {
	case err != nil:
		return op, readError(err, "fork operation", id)
	case op.Status != StatusCommitted:
		return op, Errorf(CodeAcknowledgeConflict, "fork operation %s is %s; only a committed fork can be acknowledged", id, op.Status)
	case op.Acknowledged():
		return op, nil
	}
	at := c.at
	op.AcknowledgedAt, op.AcknowledgedBy, op.UpdatedAt = &at, by, at
	changed, err := tx.UpdateOperation(ctx, op, StatusCommitted)
	if err != nil {
		return op, fmt.Errorf("stamp acknowledgement: %w", err)
	}
	if !changed {
		return op, fmt.Errorf("fork operation %s changed during its acknowledgement", id)
	}
	c.operation(op)
	return op, nil
}
