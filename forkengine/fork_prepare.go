package forkengine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// snapshotVersion is the version of the Snapshot encoding this engine writes.
const snapshotVersion = 1

// prepare is the one transaction of a fork start: it repeats the checks a concurrent start could
// have changed, freezes the snapshot, reserves the target and inserts the prepared operation.
// created is false when a replay or the barrier answered instead.
func (e *Engine) prepare(ctx context.Context, in ForkInput, hash string, desc Descriptor) (ForkOperation, bool, error) {
	var op ForkOperation
	var created bool
	err := e.update(ctx, func(tx Tx, c *changes) error {
		op, created = ForkOperation{}, false
		// The source (its boundary, its deletion) and the target id (its reservation) are what a
		// concurrent start, report or delete could change between these checks and the insert.
		if err := tx.Lock(ctx, sessionLock(in.WorkspaceID, in.SourceSessionID), sessionLock(in.WorkspaceID, in.TargetSessionID)); err != nil {
			return err
		}
		if prior, found, err := replayedOperation(ctx, tx, in, hash); found || err != nil {
			op = prior
			return err
		}
		if prior, found, err := e.blockingOperation(ctx, tx, in); found || err != nil {
			op = prior
			return err
		}
		next, err := e.freezeOperation(ctx, tx, in, hash, desc, c.at)
		if err != nil {
			return err
		}
		if err := tx.InsertOperation(ctx, next); err != nil {
			return fmt.Errorf("insert operation: %w", err)
		}
		c.operation(next)
		op, created = next, true
		return nil
	})
	if err != nil {
		return ForkOperation{}, false, err
	}
	return op, created, nil
}

// freezeOperation builds the prepared operation from the source as this transaction sees it.
func (e *Engine) freezeOperation(ctx context.Context, tx Tx, in ForkInput, hash string, desc Descriptor, now time.Time) (ForkOperation, error) {
	if err := checkTargetFree(ctx, tx, in.WorkspaceID, in.TargetSessionID); err != nil {
		return ForkOperation{}, err
	}
	source, err := forkSource(ctx, tx, in.WorkspaceID, in.SourceSessionID)
	if err != nil {
		return ForkOperation{}, err
	}
	boundary, err := boundaryTurn(ctx, tx, source, in.ThroughTurnID)
	if err != nil {
		return ForkOperation{}, err
	}
	snap, err := freezeSnapshot(ctx, tx, source, boundary)
	if err != nil {
		return ForkOperation{}, err
	}
	snapHash, err := snapshotHash(snap)
	if err != nil {
		return ForkOperation{}, err
	}
	title, err := familyTitle(ctx, tx, source)
	if err != nil {
		return ForkOperation{}, err
	}
	leaseUntil := now.Add(e.cfg.LeaseDuration)
	return ForkOperation{
		WorkspaceID: in.WorkspaceID, ID: e.newID(), RequestID: in.RequestID, RequestHash: hash,
		SourceSessionID: source.ID, TargetSessionID: in.TargetSessionID, ThroughTurnID: boundary.ID,
		SourceProviderSessionID: source.ProviderSessionID, SourceProviderTurnID: boundary.ProviderTurnID,
		SourceProviderTurnBinding: boundary.ProviderTurnBinding,
		Provider:                  source.Provider, DriverKind: desc.Kind, DriverVersion: desc.Version,
		Status: StatusPrepared, TargetTitle: title, Snapshot: snap, SnapshotHash: snapHash,
		CreatedAt: now, UpdatedAt: now, LeaseOwner: e.cfg.InstanceID, LeaseExpiresAt: &leaseUntil,
	}, nil
}

// checkTargetFree refuses a target id that is already a session (even a deleted one) or is held by
// another operation that has not failed.
func checkTargetFree(ctx context.Context, r Reader, workspaceID, targetID string) error {
	if _, found, err := findSession(ctx, r, workspaceID, targetID); err != nil || found {
		if err != nil {
			return err
		}
		return ReasonErrorf(CodeForkConflict, ReasonTargetReserved, "session %q already exists", targetID)
	}
	op, held, err := reservation(ctx, r, workspaceID, targetID)
	if err != nil || !held {
		return err
	}
	return ReasonErrorf(CodeForkConflict, ReasonTargetReserved,
		"session id %q is reserved by fork operation %s", targetID, op.ID)
}

// freezeSnapshot copies the source's turns through the boundary (sequence order) and their
// messages (transcript order). Later changes to the source never reach a frozen snapshot.
func freezeSnapshot(ctx context.Context, r Reader, source Session, boundary Turn) (Snapshot, error) {
	turns, err := r.TurnsThrough(ctx, source.WorkspaceID, source.ID, boundary.Sequence)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read turns of %s through %d: %w", source.ID, boundary.Sequence, err)
	}
	if len(turns) == 0 || turns[len(turns)-1].ID != boundary.ID {
		return Snapshot{}, ReasonErrorf(CodeForkConflict, ReasonBoundaryMismatch,
			"the history of session %q does not end with turn %q", source.ID, boundary.ID)
	}
	ids := make([]string, len(turns))
	for i, t := range turns {
		ids[i] = t.ID
	}
	byTurn, err := r.MessagesByTurnIDs(ctx, source.WorkspaceID, ids)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read messages of %s: %w", source.ID, err)
	}
	n := 0
	for _, id := range ids {
		n += len(byTurn[id])
	}
	var messages []Message // nil for none, as before: encodings tell nil from empty
	if n > 0 {
		messages = make([]Message, 0, n)
	}
	for _, id := range ids {
		messages = append(messages, byTurn[id]...)
	}
	slices.SortStableFunc(messages, func(a, b Message) int { return cmp.Compare(a.Position, b.Position) })
	return Snapshot{Version: snapshotVersion, Session: source, Turns: turns, Messages: messages}, nil
}
