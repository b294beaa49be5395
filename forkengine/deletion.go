package forkengine

import (
	"context"
	"fmt"
	"slices"
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
			if err := lockPurgedFamilies(ctx, tx, s); err != nil {
				return err
			}
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

// lockPurgedFamilies takes the family lock of every family whose fork count a purge of s
// changes: s's own, each family a fork into s was made from, and the family each session forked
// from s heads once s is gone. The store recounts those families from the rows it can see; a
// fork being prepared in one of them on another instance (it holds the family lock, see
// familyTitle) is not among those rows until it commits, so without the lock the recount
// dropped it from the count for good. The families are read before they are locked (the lock
// is named by the root), and read again under the locks until no new one turns up: a purge of
// an ancestor committed meanwhile can make s or its forks roots of their own.
func lockPurgedFamilies(ctx context.Context, tx Tx, s Session) error {
	var locked []string
	for {
		keys, err := purgedFamilies(ctx, tx, s)
		if err != nil {
			return err
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return slices.Contains(locked, k) })
		if len(keys) == 0 {
			return nil
		}
		if err := tx.Lock(ctx, keys...); err != nil {
			return err
		}
		locked = append(locked, keys...)
	}
}

// purgedFamilies lists the family lock keys of lockPurgedFamilies, as r sees them now.
func purgedFamilies(ctx context.Context, r Reader, s Session) ([]string, error) {
	ws := s.WorkspaceID
	root, err := familyRoot(ctx, r, s)
	if err != nil {
		return nil, err
	}
	keys := []string{familyLock(ws, root.ID)}
	children, err := r.LineagesBySourceIDs(ctx, ws, []string{s.ID})
	if err != nil {
		return nil, fmt.Errorf("read forks of %s: %w", s.ID, err)
	}
	for _, l := range children[s.ID] {
		keys = append(keys, familyLock(ws, l.TargetSessionID))
	}
	into, err := r.ListOperations(ctx, ws, OperationFilter{TargetSessionID: s.ID}, PageCursor{}, 0)
	if err != nil {
		return nil, fmt.Errorf("read forks into %s: %w", s.ID, err)
	}
	for _, op := range into {
		source, found, err := findSession(ctx, r, ws, op.SourceSessionID)
		if err != nil {
			return nil, err
		}
		if !found || source.ID == s.ID {
			continue
		}
		if root, err = familyRoot(ctx, r, source); err != nil {
			return nil, err
		}
		keys = append(keys, familyLock(ws, root.ID))
	}
	return keys, nil
}
