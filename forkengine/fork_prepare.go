package forkengine

import (
	"context"
	"fmt"
	"time"
)

// snapshotVersion is the version of the Snapshot this engine writes: 2, a reference to the shared
// history (version 1 snapshots, holding the whole prefix, still commit as copies).
const snapshotVersion = 2

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
	id := e.newID()
	childKey := newForkIDs(ForkOperation{WorkspaceID: in.WorkspaceID, ID: id, SourceSessionID: source.ID,
		TargetSessionID: in.TargetSessionID}).historyKey()
	snap, err := freezeSnapshot(ctx, tx, source, boundary, childKey)
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
	target, err := freezeTarget(source, in.Target)
	if err != nil {
		return ForkOperation{}, err
	}
	leaseUntil := now.Add(e.cfg.LeaseDuration)
	op := ForkOperation{
		WorkspaceID: in.WorkspaceID, ID: id, RequestID: in.RequestID, RequestHash: hash, RequestedBy: in.RequestedBy,
		SourceSessionID: source.ID, TargetSessionID: in.TargetSessionID, ThroughTurnID: boundary.ID,
		SourceProviderSessionID: source.ProviderSessionID, SourceProviderTurnID: boundary.ProviderTurnID,
		SourceProviderTurnBinding: boundary.ProviderTurnBinding,
		Provider:                  source.Provider, DriverKind: desc.Kind, DriverVersion: desc.Version,
		Status: StatusPrepared, TargetTitle: title, Target: target, Snapshot: snap, SnapshotHash: snapHash,
		CreatedAt: now, UpdatedAt: now, LeaseOwner: e.cfg.InstanceID, LeaseExpiresAt: &leaseUntil,
	}
	// An interaction the child could not be given fails the fork here, before the provider is
	// asked for a child, rather than at a commit that could never succeed.
	if _, err := childInteractions(op, newForkIDs(op), now); err != nil {
		return ForkOperation{}, err
	}
	return op, nil
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

// freezeSnapshot freezes the reference a fork commits: the boundary, the child's segments (the
// source's own cut at the boundary, then the source's rows at the history clock's value now),
// the prefix's turn counts, and the prefix turns the child will hold rows of its own for. The
// caller holds the source's session lock, so no write of the source interleaves: every message
// of the prefix has a position at or below the watermark, and every later one above it. What it
// reads of the prefix is readPrefix's: with a PrefixReader a constant number of statements of
// constant size whatever the prefix's length (counts, and only the turns, interactions and typed
// messages the snapshot and its checks use), never a plain message.
func freezeSnapshot(ctx context.Context, r Reader, source Session, boundary Turn, childKey string) (Snapshot, error) {
	ws := source.WorkspaceID
	prefix, err := readPrefix(ctx, r, ws, source.ID, boundary.Sequence)
	if err != nil {
		return Snapshot{}, err
	}
	if prefix.Turns == 0 || prefix.Last != boundary.ID {
		return Snapshot{}, ReasonErrorf(CodeForkConflict, ReasonBoundaryMismatch,
			"the history of session %q does not end with turn %q", source.ID, boundary.ID)
	}
	// A typed reference the child (history key childKey) could not map fails the fork here,
	// before the provider is asked for a child (fork_references.go).
	if err := prefixReferencesProblem(prefix.TypedMessages, func(kind, id string) string { return presentedRef(childKey, kind, id) }); err != nil {
		return Snapshot{}, err
	}
	history, _, err := r.HistoryOf(ctx, ws, source.ID)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read the history of %s: %w", source.ID, err)
	}
	watermark, err := r.HistoryClock(ctx, ws)
	if err != nil {
		return Snapshot{}, fmt.Errorf("read the history clock of %s: %w", ws, err)
	}
	frozen := boundary.Clone() // the operation's source binding is this turn's too: share no bytes
	snap := Snapshot{Version: snapshotVersion, Session: source, Boundary: &frozen, PrefixTurns: prefix.Turns,
		Segments:     childSegments(history, history.Overrides(), ws, source.ID, boundary.Sequence, watermark),
		Interactions: prefix.Interactions, BoundTurns: prefix.Turns, PrefixMessages: prefix.InheritedMessages,
		PrefixCounted: prefix.Counted}
	// The child reads the audit messages through its segments, up to the clock's value now.
	snap.AuditBound = watermark
	if err := checkInheritedAudits(ctx, r, source, boundary, childKey); err != nil {
		return Snapshot{}, err
	}
	for _, t := range prefix.Irregular {
		if !t.HasProviderBinding() {
			snap.BoundTurns--
		}
		snap.Overrides = append(snap.Overrides, t)
	}
	return snap, nil
}
