package forkengine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// commit materialises a provider_accepted operation: target session, copied turns and messages,
// lineage and the move to committed, in one transaction. It is idempotent: a committed operation is
// returned as it is. It runs as a checkpoint (on a context the caller cannot cancel, tried again
// when a try runs out of time), because the provider has already made the child and the only
// thing left is to record it.
func (e *Engine) commit(ctx context.Context, op ForkOperation) (ForkOperation, error) {
	var out ForkOperation
	err := e.checkpoint(ctx, func(ctx context.Context) error { return e.commitOnce(ctx, op, &out) })
	if err != nil {
		return op, fmt.Errorf("commit fork operation %s: %w", op.ID, err)
	}
	return out, nil
}

// commitOnce is one try of commit, which leaves the committed operation in out.
func (e *Engine) commitOnce(ctx context.Context, op ForkOperation, out *ForkOperation) error {
	return e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(op.WorkspaceID, op.TargetSessionID)); err != nil {
			return err
		}
		current, err := tx.GetOperation(ctx, op.WorkspaceID, op.ID)
		switch {
		case err != nil:
			return readError(err, "fork operation", op.ID)
		case current.Status == StatusCommitted:
			*out = current
			return nil
		case current.Status != StatusProviderAccepted:
			return fmt.Errorf("fork operation %s is %s, not provider_accepted", op.ID, current.Status)
		}
		*out, err = materialize(ctx, tx, c, current, true, current.Status)
		return err
	})
}

// errOperationMoved: the operation was not in the status a commit expected; nothing was written.
var errOperationMoved = errors.New("fork operation moved during its commit")

// materialize writes the fork target from the frozen snapshot and moves op to committed. stored
// says op's snapshot was read from the store, so its hash is checked before anything is copied;
// the engine's own private copy of what it froze needs no such proof. from is the status the
// stored row must have: op's own, or dispatching when the acceptance in op was never written
// (see acceptAndCommit); then the acceptance is recorded in this transaction, and the child's
// provider session is claimed for the workspace here (errChildOwned when another owns it). The
// compare-and-swap runs first, so a lost one (errOperationMoved) has written nothing.
func materialize(ctx context.Context, tx Tx, c *changes, op ForkOperation, stored bool, from OperationStatus) (ForkOperation, error) {
	if err := verifySnapshot(op, stored); err != nil {
		return op, err
	}
	if err := checkTargetAbsent(ctx, tx, op); err != nil {
		return op, err
	}
	if !CanTransition(op.Status, StatusCommitted) {
		return op, fmt.Errorf("fork operation %s: illegal transition %s -> %s", op.ID, op.Status, StatusCommitted)
	}
	ids := newForkIDs(op)
	targetTurn := ids.turn(op.ThroughTurnID)
	if op.Snapshot.Shared() {
		targetTurn = PresentedTurnID(ids.historyKey(), op.Snapshot.Boundary.Sequence)
	}
	lineage := targetLineage(op, targetTurn, c.at)
	committed := op
	at := c.at
	committed.Status, committed.UpdatedAt, committed.CompletedAt = StatusCommitted, at, &at
	committed.TargetTurnID, committed.Error = lineage.TargetTurnID, ""
	switch changed, err := tx.UpdateOperation(ctx, committed, from); {
	case err != nil:
		return op, fmt.Errorf("move fork operation %s to %s: %w", op.ID, StatusCommitted, err)
	case !changed:
		return op, errOperationMoved
	}
	// The child is claimed with the acceptance. One recorded before (provider_accepted) was
	// claimed then, unless it was recorded before ownership existed: claimed now, and committed
	// even if another workspace has it since, since an accepted child is never dropped.
	if err := claimChild(ctx, tx, op, at); err != nil && (from != StatusProviderAccepted || !errors.Is(err, errChildOwned)) {
		return op, err
	}
	if op.Snapshot.Shared() {
		if err := writeSharedTarget(ctx, tx, c, op, ids, lineage); err != nil {
			return op, err
		}
		c.operation(committed)
		return committed, nil
	}
	if err := writeTarget(ctx, tx, c, op, ids, lineage); err != nil {
		return op, err
	}
	committed.Snapshot = committedSnapshot(op.Snapshot)
	if err := tx.ReplaceSnapshot(ctx, committed); err != nil {
		return op, fmt.Errorf("keep the committed snapshot of fork operation %s: %w", op.ID, err)
	}
	c.operation(committed)
	return committed, nil
}

// writeSharedTarget creates the target of a version 2 snapshot: its session, its History (the
// frozen segments and audit bound), the rows it holds of its own for the overridden prefix
// turns, its interactions and its lineage. Nothing of the transcript is copied, its audit
// messages neither: the commit writes the same few rows for a session of ten messages as for
// one of a million.
func writeSharedTarget(ctx context.Context, tx Tx, c *changes, op ForkOperation, ids *forkIDs, lineage Lineage) error {
	session := targetSession(op, c.at)
	if err := tx.UpsertSession(ctx, session); err != nil {
		return fmt.Errorf("create target session %s: %w", session.ID, err)
	}
	c.session(EventSessionUpserted, session) // as writeTarget: the target is new, one event says so
	h := History{WorkspaceID: op.WorkspaceID, SessionID: op.TargetSessionID, Key: ids.historyKey(),
		Boundary: op.Snapshot.Boundary.Sequence, Segments: op.Snapshot.Segments, AuditBound: auditBound(op.Snapshot)}
	h.InheritedMessages, h.MessagesCounted = op.Snapshot.PrefixCount()
	overrides, err := sharedOverrides(ctx, tx, op, h, c.at)
	if err != nil {
		return err
	}
	h.PrefixTurns, h.InheritedTurns = op.Snapshot.PrefixTurns, op.Snapshot.PrefixTurns-len(overrides)
	if err := tx.InsertHistory(ctx, h); err != nil {
		return fmt.Errorf("write the history of %s: %w", session.ID, err)
	}
	if err := tx.InsertTurns(ctx, overrides); err != nil {
		return fmt.Errorf("write %d overridden turns: %w", len(overrides), err)
	}
	interactions, err := childInteractions(op, ids, c.at)
	if err != nil {
		return err
	}
	if err := tx.InsertInteractions(ctx, interactions); err != nil {
		return fmt.Errorf("copy %d interactions: %w", len(interactions), err)
	}
	if err := tx.InsertLineage(ctx, lineage); err != nil {
		return fmt.Errorf("write lineage of %s: %w", session.ID, err)
	}
	return nil
}

// auditBound is the bound up to which the child of s presents its owners' audit messages. A
// snapshot frozen before it had one (it holds its audit messages instead) froze them at the
// clock's value its own segment names: the largest watermark of its segments.
func auditBound(s Snapshot) int64 {
	if s.AuditBound != 0 {
		return s.AuditBound
	}
	var bound int64
	for _, g := range s.Segments {
		bound = max(bound, g.Watermark)
	}
	return bound
}

// sharedOverrides are the turn rows a shared target holds of its own, under their presented ids:
// the frozen overrides (a turn not settled then is settled as interrupted, a turn unbound then
// stays unbound), and in provider_owned mode every bound prefix turn with the binding the
// provider returned for the child, in order (so a fork of the fork works); unbound ones lose
// theirs. host_copy keeps the source bindings, read through the segments.
func sharedOverrides(ctx context.Context, r Reader, op ForkOperation, h History, at time.Time) ([]Turn, error) {
	frozen := op.Snapshot.Overrides
	if op.StateBindingMode == BindingProviderOwned {
		var err error
		if frozen, err = r.TurnsThrough(ctx, op.WorkspaceID, op.SourceSessionID, h.Boundary); err != nil {
			return nil, fmt.Errorf("read the prefix of %s: %w", op.SourceSessionID, err)
		}
		byID := map[string]Turn{}
		for _, t := range op.Snapshot.Overrides {
			byID[t.ID] = t
		}
		for i, t := range frozen {
			if o, ok := byID[t.ID]; ok {
				frozen[i] = o // as frozen, not as it may have become
			}
		}
	}
	out := make([]Turn, 0, len(frozen))
	next := 0
	for _, src := range frozen {
		t := PresentTurn(h, src)
		t.UpdatedAt = at
		t = settleForChild(op, src, t, at, &next)
		out = append(out, t)
	}
	return out, nil
}

// committedSnapshot is what a committed operation keeps of its frozen snapshot: the source
// session, from which its committed projection presents the target (targetSession). The frozen
// turns and messages now live in the target's copied rows, so keeping them too stored the
// transcript twice (about 20 KB of a 100-message fork); SnapshotHash still names what was frozen.
func committedSnapshot(s Snapshot) Snapshot {
	return Snapshot{Version: s.Version, Session: s.Session}
}

// writeTarget creates the target session with its copied turns and messages, and its lineage.
func writeTarget(ctx context.Context, tx Tx, c *changes, op ForkOperation, ids *forkIDs, lineage Lineage) error {
	session := targetSession(op, c.at)
	if err := tx.UpsertSession(ctx, session); err != nil {
		return fmt.Errorf("create target session %s: %w", session.ID, err)
	}
	// One SESSION_UPSERTED (plus the committed FORK_OPERATION_UPDATED) describes the whole
	// commit: the target is new, so a subscriber loads its turns by session. An event per copied
	// turn would add a log row and index entry per turn to every commit and tell nothing more.
	c.session(EventSessionUpserted, session)
	turns := targetTurns(op, ids, c.at)
	if err := tx.InsertTurns(ctx, turns); err != nil {
		return fmt.Errorf("copy %d turns: %w", len(turns), err)
	}
	messages, err := targetMessages(op, ids)
	if err != nil {
		return err
	}
	if len(messages) > 0 {
		if _, err := tx.InsertMessages(ctx, messages); err != nil {
			return fmt.Errorf("copy messages: %w", err)
		}
	}
	if err := tx.InsertLineage(ctx, lineage); err != nil {
		return fmt.Errorf("write lineage of %s: %w", session.ID, err)
	}
	return nil
}

// verifySnapshot proves the snapshot ends at the boundary and, when rehash is set, that it is
// the one frozen at prepare.
func verifySnapshot(op ForkOperation, rehash bool) error {
	if through, ok := op.Snapshot.through(); !ok || through.ID != op.ThroughTurnID {
		return fmt.Errorf("fork operation %s: frozen snapshot does not end with turn %s", op.ID, op.ThroughTurnID)
	}
	if !rehash {
		return nil
	}
	match, err := snapshotMatches(op.Snapshot, op.SnapshotHash)
	switch {
	case err != nil:
		return err
	case !match:
		return fmt.Errorf("fork operation %s: frozen snapshot does not match its hash", op.ID)
	}
	return nil
}

// checkTargetAbsent refuses to overwrite a session that appeared under the reserved target id.
func checkTargetAbsent(ctx context.Context, r Reader, op ForkOperation) error {
	_, found, err := findSession(ctx, r, op.WorkspaceID, op.TargetSessionID)
	if err != nil || !found {
		return err
	}
	return ReasonErrorf(CodeForkConflict, ReasonTargetReserved,
		"target session %q already exists", op.TargetSessionID)
}

// targetSession is the fork target as created at time at: a root session of the same provider
// holding the child the provider made, with the frozen title, the frozen target settings, model
// and cwd (TargetValues), the rules of a child's own fields (childFieldRules), and the source's
// presentation.
//
// It starts from the source's fields and replaces the ones that name or date the target, so a
// field added to Session reaches a fork without a line here.
func targetSession(op ForkOperation, at time.Time) Session {
	s := op.Snapshot.Session.Clone()
	target := op.TargetValues()
	if op.Target != nil {
		s.Cwd, s.Model, s.Settings = target.Cwd, target.Model, target.Settings
	}
	if len(s.Settings) == 0 {
		s.Settings = nil // as the field-by-field copy it replaced made it
	}
	childFieldRules(&s, target)
	s.WorkspaceID, s.ID, s.Kind = op.WorkspaceID, op.TargetSessionID, SessionRoot
	s.ProviderSessionID, s.Title = op.TargetProviderSessionID, op.TargetTitle
	s.CreatedAt, s.UpdatedAt, s.DeletedAt = at, at, nil
	return s
}

// settleForChild is the rule both ways of making a child's turns share (copied or presented
// through its history): a turn that had not settled when frozen is settled as interrupted at at,
// since the child will never finish it; in provider_owned mode a turn src bound at the source
// takes the next binding the provider returned for the child (*next counts them), and an unbound
// one has none.
func settleForChild(op ForkOperation, src, t Turn, at time.Time, next *int) Turn {
	if !t.Settled() {
		settledAt := at
		t.Phase, t.Outcome, t.SettledAt = PhaseSettled, OutcomeInterrupted, &settledAt
	}
	if op.StateBindingMode == BindingProviderOwned {
		t.ProviderTurnID, t.ProviderTurnBinding = "", nil
		if src.HasProviderBinding() && *next < len(op.TargetTurnBindings) {
			b := op.TargetTurnBindings[*next]
			t.ProviderTurnID, t.ProviderTurnBinding = b.ProviderTurnID, b.Binding
			*next++
		}
	}
	return t
}

// targetTurns copies the snapshot turns under deterministic ids with their sequences. A turn that
// had not settled when frozen is settled as interrupted: the child will never finish it. In
// provider_owned mode each bound turn takes the binding the provider returned for the child (so a
// fork of the fork works) and unbound turns lose theirs; host_copy keeps the source bindings.
func targetTurns(op ForkOperation, ids *forkIDs, at time.Time) []Turn {
	turns := make([]Turn, 0, len(op.Snapshot.Turns))
	next := 0
	for _, src := range op.Snapshot.Turns {
		t := src
		t.SessionID, t.ID, t.UpdatedAt = op.TargetSessionID, ids.turn(src.ID), at
		t = settleForChild(op, src, t, at, &next)
		turns = append(turns, t)
	}
	return turns
}

// targetMessages copies the snapshot transcript, in order, under deterministic ids, with the typed
// references inside its parts rewritten under the same derivation (kinds "call" and
// "attachment"). Errors: FORK_CONFLICT reason typed_reference_unknown (RemapParts).
func targetMessages(op ForkOperation, ids *forkIDs) ([]Message, error) {
	messages := make([]Message, 0, len(op.Snapshot.Messages))
	for _, src := range op.Snapshot.Messages {
		m := src
		m.SessionID, m.Position = op.TargetSessionID, 0
		m.TurnID = ids.turn(src.TurnID)
		m.ID = ids.message(src.ID)
		parts, err := RemapParts(src.Parts, ids.id)
		if err != nil {
			return nil, fmt.Errorf("copy message %s: %w", src.ID, err)
		}
		m.Parts = parts
		messages = append(messages, m)
	}
	return messages, nil
}

// targetLineage is the forkedFrom record of the target.
func targetLineage(op ForkOperation, targetTurnID string, at time.Time) Lineage {
	return Lineage{
		WorkspaceID: op.WorkspaceID, OperationID: op.ID,
		SourceSessionID: op.SourceSessionID, SourceTurnID: op.ThroughTurnID,
		TargetSessionID: op.TargetSessionID, TargetTurnID: targetTurnID, ForkedAt: at,
	}
}
