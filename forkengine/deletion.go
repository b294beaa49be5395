package forkengine

import (
	"context"
	"fmt"
)

// DeleteSession soft-deletes a session (it stays readable with DeletedAt set, and its fork
// operations stay) or, with purge, removes it with its turns, messages, every operation where it
// is source or target, and every lineage that names it. Deleting a deleted session again without
// purge changes nothing. A source with a running fork cannot be deleted, and neither can a target
// id a fork still holds (active, or unknown: the provider may have made that child). Errors:
// BAD_USER_INPUT (ids), NOT_FOUND, FORK_IN_PROGRESS (retryable), FORK_CONFLICT reason
// target_reserved.
func (e *Engine) DeleteSession(ctx context.Context, workspaceID, id string, purge bool) error {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"id", &id}); err != nil {
		return err
	}
	err := e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(workspaceID, id)); err != nil {
			return err
		}
		// The rules come first: a reserved target id has no session row yet, and must answer
		// with the reservation rather than NOT_FOUND.
		if err := checkDeletable(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		s, err := tx.GetSession(ctx, workspaceID, id)
		if err != nil {
			return readError(err, "session", id)
		}
		if s.Deleted() && !purge {
			return nil
		}
		if purge {
			err = tx.PurgeSession(ctx, workspaceID, id)
		} else {
			err = tx.SoftDeleteSession(ctx, workspaceID, id, c.at)
		}
		if err != nil {
			return fmt.Errorf("delete (purge=%t): %w", purge, err)
		}
		c.session(EventSessionDeleted, s)
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// checkDeletable applies the deletion rules of SPEC §2.9 to session id.
func checkDeletable(ctx context.Context, r Reader, workspaceID, id string) error {
	ops, err := r.OperationsBySourceIDs(ctx, workspaceID, []string{id})
	if err != nil {
		return fmt.Errorf("read forks of %s: %w", id, err)
	}
	for _, op := range ops {
		if op.Status.Active() {
			return &Error{Code: CodeForkInProgress, Retryable: true,
				Message: fmt.Sprintf("session %q is the source of running fork operation %s", id, op.ID)}
		}
	}
	op, held, err := reservation(ctx, r, workspaceID, id)
	if err != nil || !held || op.Status == StatusCommitted {
		return err
	}
	return ReasonErrorf(CodeForkConflict, ReasonTargetReserved,
		"session id %q is reserved by fork operation %s", id, op.ID)
}
