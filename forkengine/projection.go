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
	if op.Status != StatusProviderAccepted || !e.drives(op) {
		return op, nil // another instance's work is finished by that instance, or its taker
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
	results, err := e.CommittedResults(ctx, []ForkOperation{op})
	if err != nil {
		return Session{}, Lineage{}, err
	}
	r := results[0]
	return r.Session, r.Lineage, r.Err
}

// CommittedResult is the committed projection of one fork operation, or why it has none.
type CommittedResult struct {
	// Session is the target session as the commit created it.
	Session Session
	// Lineage is the lineage the commit wrote.
	Lineage Lineage
	// Err is this operation's own error (FORK_CONFLICT, as CommittedResult); Session and Lineage
	// are zero when it is set.
	Err error
}

// CommittedResults is the batched CommittedResult: results[i] answers ops[i], each with the same
// checks and per-operation errors. The live lineages of all targets are read with one
// LineagesByTargetIDs per workspace, so a page of operations costs a fixed number of statements.
// The returned error is set only when that read fails.
func (e *Engine) CommittedResults(ctx context.Context, ops []ForkOperation) ([]CommittedResult, error) {
	targets := make(map[string][]string) // workspace -> target ids of committed ops
	for _, op := range ops {
		if isCommitted(op) {
			targets[op.WorkspaceID] = append(targets[op.WorkspaceID], op.TargetSessionID)
		}
	}
	live := make(map[string]map[string]Lineage, len(targets))
	for ws, ids := range targets {
		rows, err := e.store.LineagesByTargetIDs(ctx, ws, ids)
		if err != nil {
			return nil, fmt.Errorf("read lineages of %d fork targets: %w", len(ids), err)
		}
		live[ws] = rows
	}
	out := make([]CommittedResult, len(ops))
	for i, op := range ops {
		out[i] = committedResult(op, live[op.WorkspaceID])
	}
	return out, nil
}

func isCommitted(op ForkOperation) bool {
	return op.Status == StatusCommitted && op.CompletedAt != nil && op.TargetTurnID != ""
}

// committedResult projects op and checks it against the live lineage rows of its workspace.
func committedResult(op ForkOperation, live map[string]Lineage) CommittedResult {
	if !isCommitted(op) {
		return CommittedResult{Err: Errorf(CodeForkConflict, "fork operation %s is not committed", op.ID)}
	}
	lineage := targetLineage(op, op.TargetTurnID, *op.CompletedAt)
	if row, ok := live[op.TargetSessionID]; ok && !sameIdentity(row, lineage) {
		return CommittedResult{Err: ReasonErrorf(CodeForkConflict, ReasonInconsistentLineage,
			"the lineage of session %q does not match fork operation %s", op.TargetSessionID, op.ID)}
	}
	return CommittedResult{Session: targetSession(op, *op.CompletedAt), Lineage: lineage}
}

// sameIdentity compares what a lineage asserts about a fork; ForkedAt is presentation only.
func sameIdentity(a, b Lineage) bool {
	return a.OperationID == b.OperationID && a.SourceSessionID == b.SourceSessionID &&
		a.SourceTurnID == b.SourceTurnID && a.TargetSessionID == b.TargetSessionID &&
		a.TargetTurnID == b.TargetTurnID
}
