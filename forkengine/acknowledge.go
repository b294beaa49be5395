package forkengine

import (
	"context"
	"fmt"
)

// Acknowledge records that a client has seen and adopted a committed fork. The first call stamps
// AcknowledgedAt and emits an event; later calls return the operation unchanged. Acknowledging
// releases the barrier on the operation's boundary, so a new request there makes a new fork.
// Errors: BAD_USER_INPUT (ids), NOT_FOUND, ACKNOWLEDGE_CONFLICT (the operation is not committed).
func (e *Engine) Acknowledge(ctx context.Context, workspaceID, id string) (ForkOperation, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"id", &id}); err != nil {
		return ForkOperation{}, err
	}
	var out ForkOperation
	err := e.update(ctx, func(tx Tx, c *changes) error {
		op, err := tx.GetOperation(ctx, workspaceID, id)
		switch {
		case err != nil:
			return readError(err, "fork operation", id)
		case op.Status != StatusCommitted:
			return Errorf(CodeAcknowledgeConflict, "fork operation %s is %s; only a committed fork can be acknowledged", id, op.Status)
		case op.Acknowledged():
			out = op
			return nil
		}
		// Not a status change (committed stays committed), so no transition: a CAS on committed
		// keeps two first acknowledgements from both stamping.
		at := c.at
		op.AcknowledgedAt, op.UpdatedAt = &at, at
		changed, err := tx.UpdateOperation(ctx, op, StatusCommitted)
		if err != nil {
			return fmt.Errorf("stamp acknowledgement: %w", err)
		}
		if !changed {
			return fmt.Errorf("fork operation %s changed during its acknowledgement", id)
		}
		c.operation(op)
		out = op
		return nil
	})
	if err != nil {
		return ForkOperation{}, fmt.Errorf("acknowledge fork operation %s: %w", id, err)
	}
	return out, nil
}
