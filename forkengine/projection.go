package forkengine

import (
	"context"
	"fmt"
)

// Operation reads a fork operation. A provider_accepted operation is committed first when
// possible; if that fails the latest stored state is returned without an error and a later read
// tries again. It never acknowledges and never calls a driver. Errors: BAD_USER_INPUT (ids),
// NOT_FOUND.
func (e *Engine) Operation(ctx context.Context, workspaceID, id string) (ForkOperation, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"id", &id}); err != nil {
		return ForkOperation{}, err
	}
	op, err := e.store.GetOperation(ctx, workspaceID, id)
	if err != nil {
		return ForkOperation{}, readError(err, "fork operation", id)
	}
	if op.Status != StatusProviderAccepted {
		return op, nil
	}
	committed, err := e.commit(ctx, op)
	if err != nil {
		// The read must still answer; the operation stays provider_accepted and nothing is lost.
		e.log.Warn("commit on read failed", "workspace", workspaceID, "operation", id, "error", err)
		if latest, rerr := e.store.GetOperation(ctx, workspaceID, id); rerr == nil {
			return latest, nil
		}
		return op, nil
	}
	return committed, nil
}

// CommittedResult builds the immutable committed projection of op: the target session as the
// commit created it and its lineage, both from the operation and its frozen snapshot. So it still
// answers after the target was deleted or lost its lineage row. If a live lineage row for the
// target tells a different story, the stored identity is inconsistent. Errors: FORK_CONFLICT
// (op not committed; reason inconsistent_lineage).
func (e *Engine) CommittedResult(ctx context.Context, op ForkOperation) (Session, Lineage, error) {
	if op.Status != StatusCommitted || op.CompletedAt == nil || op.TargetTurnID == "" {
		return Session{}, Lineage{}, Errorf(CodeForkConflict, "fork operation %s is not committed", op.ID)
	}
	session := targetSession(op, *op.CompletedAt)
	lineage := targetLineage(op, op.TargetTurnID, *op.CompletedAt)
	live, err := e.store.LineagesByTargetIDs(ctx, op.WorkspaceID, []string{op.TargetSessionID})
	if err != nil {
		return Session{}, Lineage{}, fmt.Errorf("read lineage of %s: %w", op.TargetSessionID, err)
	}
	if row, ok := live[op.TargetSessionID]; ok && !sameIdentity(row, lineage) {
		return Session{}, Lineage{}, ReasonErrorf(CodeForkConflict, ReasonInconsistentLineage,
			"the lineage of session %q does not match fork operation %s", op.TargetSessionID, op.ID)
	}
	return session, lineage, nil
}

// sameIdentity compares what a lineage asserts about a fork; ForkedAt is presentation only.
func sameIdentity(a, b Lineage) bool {
	return a.OperationID == b.OperationID && a.SourceSessionID == b.SourceSessionID &&
		a.SourceTurnID == b.SourceTurnID && a.TargetSessionID == b.TargetSessionID &&
		a.TargetTurnID == b.TargetTurnID
}
