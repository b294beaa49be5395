package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// StartFork validates a fork request, freezes the source history through the boundary turn,
// reserves the target id and records the operation as prepared, all in one transaction, then
// returns at once (public ACCEPTED/FROZEN) while the dispatch runs in the background.
//
// A replay of a request id with the same body returns that operation as it is now and does no
// work. With the barrier on, a new request on a boundary whose latest operation is active,
// unknown, or committed but unacknowledged gets that operation back instead of a new fork.
//
// A boundary turn without a provider binding (provider_turn_missing), or one whose binding the
// provider's probe refuses (provider_turn_unforkable), gets one binding recovery (reference
// §4.6): the driver looks the turn up in the provider's history by the submission proof
// recorded for it, and what it finds is written by a compare and swap on the empty binding
// (recoverBinding). When that does not bind it, the refusal keeps its reason.
//
// Errors: BAD_USER_INPUT (ids, source equals target), NOT_FOUND (source missing or deleted),
// FORBIDDEN reason provider_session_owned (another workspace owns the source's provider session),
// FORK_CONFLICT with a reason (request_conflict, source_not_root, provider_session_missing,
// turn_not_found, turn_not_settled, provider_turn_missing, provider_turn_unforkable,
// provider_turn_boundary_mismatch, target_reserved), FORK_IN_PROGRESS (barrier off, an active
// operation holds the boundary; retryable), FORK_UNSUPPORTED (no driver, or the driver cannot fork
// through a turn, or reason forking_disabled: the kill switch is off for the workspace or the
// server; no operation is created, no driver is asked).
func (e *Engine) StartFork(ctx context.Context, in ForkInput) (ForkOperation, error) {
	if err := cleanForkInput(&in); err != nil {
		return ForkOperation{}, err
	}
	op, created, err := e.startFork(ctx, in)
	if errors.Is(err, ErrDuplicate) {
		// A concurrent start won a unique rule between our checks and our insert. Running the start
		// again lets the replay, barrier or reservation check answer as if we had come second.
		op, created, err = e.startFork(ctx, in)
	}
	if err != nil {
		return ForkOperation{}, fmt.Errorf("start fork %s: %w", in.RequestID, err)
	}
	if created && !e.cfg.NoBackground {
		e.processInBackground(ctx, op, dispatchValues(in.Target))
	}
	return op, nil
}

// cleanForkInput trims and checks the ids and derives the target id when none was given.
func cleanForkInput(in *ForkInput) error {
	err := cleanIDs(idField{"workspaceId", &in.WorkspaceID}, idField{"sourceSessionId", &in.SourceSessionID},
		idField{"throughTurnId", &in.ThroughTurnID}, idField{"requestId", &in.RequestID})
	if err != nil {
		return err
	}
	if in.TargetSessionID == "" {
		in.TargetSessionID = derivedTargetID(in.WorkspaceID, in.RequestID)
	}
	if err := cleanIDs(idField{"targetSessionId", &in.TargetSessionID}); err != nil {
		return err
	}
	if in.SourceSessionID == in.TargetSessionID {
		return Errorf(CodeInvalid, "targetSessionId must differ from sourceSessionId")
	}
	return cleanTarget(in.Target)
}

// startFork runs the checks in the order SPEC §2.1 gives them. The cheap read-only checks and the
// driver calls run outside the transaction; the transaction repeats the checks that can race.
func (e *Engine) startFork(ctx context.Context, in ForkInput) (ForkOperation, bool, error) {
	hash := requestHash(in)
	if op, found, err := replayedOperation(ctx, e.store, in, hash); found || err != nil {
		return op, false, err // a replay starts nothing, so it is answered with forking off too
	}
	if err := e.checkForking(ctx, in.WorkspaceID); err != nil {
		return ForkOperation{}, false, err
	}
	source, err := forkSource(ctx, e.store, in.WorkspaceID, in.SourceSessionID)
	if err != nil {
		return ForkOperation{}, false, err
	}
	if err := checkOwnedSource(ctx, e.store, source); err != nil {
		return ForkOperation{}, false, err
	}
	// The target is frozen in the transaction, from the source it reads; applying the rule to
	// this read first refuses a target that cannot be frozen before any driver is asked.
	if _, err := freezeTarget(source, in.Target); err != nil {
		return ForkOperation{}, false, err
	}
	if op, found, err := e.blockingOperation(ctx, e.store, in); found || err != nil {
		return op, false, err
	}
	boundary, recovered, err := e.forkableBoundary(ctx, source, in.ThroughTurnID)
	if err != nil {
		return ForkOperation{}, false, err
	}
	desc, driver, err := e.describe(ctx, source)
	if err != nil {
		return ForkOperation{}, false, err
	}
	forkable, err := e.probeOne(ctx, driver, source, boundary)
	if !forkable && !recovered && !errors.Is(err, ErrProviderUnavailable) && e.recoverBinding(ctx, source, boundary) {
		// The provider refused the binding it has; recovery found (or confirmed) the one its
		// history holds, so it is read back and asked about once more.
		if boundary, err = boundaryTurn(ctx, e.store, source, in.ThroughTurnID); err != nil {
			return ForkOperation{}, false, err
		}
		forkable, err = e.probeOne(ctx, driver, source, boundary)
	}
	if !forkable {
		if errors.Is(err, ErrProviderUnavailable) {
			return ForkOperation{}, false, providerUnavailable(source, err)
		}
		return ForkOperation{}, false, ReasonErrorf(CodeForkConflict, ReasonProviderTurnUnforkable,
			"the provider cannot fork through turn %q", boundary.ID)
	}
	return e.prepare(ctx, in, hash, desc)
}

// forkableBoundary is boundaryTurn with binding recovery: a settled turn without a provider
// binding (provider_turn_missing) is recovered once, then checked again; recovered says so. When
// recovery does not bind it, the original refusal is returned, never why recovery failed.
func (e *Engine) forkableBoundary(ctx context.Context, source Session, turnID string) (Turn, bool, error) {
	boundary, err := boundaryTurn(ctx, e.store, source, turnID)
	if ErrorReason(err) != ReasonProviderTurnMissing {
		return boundary, false, err
	}
	unbound, readErr := e.store.GetTurn(ctx, source.WorkspaceID, turnID)
	if readErr != nil || !e.recoverBinding(ctx, source, unbound) {
		return Turn{}, false, err
	}
	boundary, err = boundaryTurn(ctx, e.store, source, turnID)
	return boundary, true, err
}

// replayedOperation answers a request id seen before: the same body gets its operation back, a
// different body is a conflict (never projected as operation data).
func replayedOperation(ctx context.Context, r Reader, in ForkInput, hash string) (ForkOperation, bool, error) {
	op, err := r.GetOperationByRequestID(ctx, in.WorkspaceID, in.RequestID)
	switch {
	case errors.Is(err, ErrNotFound):
		return ForkOperation{}, false, nil
	case err != nil:
		return ForkOperation{}, false, fmt.Errorf("read operation of request %s: %w", in.RequestID, err)
	case op.RequestHash != hash:
		return ForkOperation{}, false, ReasonErrorf(CodeForkConflict, ReasonRequestConflict,
			"request id %q was already used for a different fork", in.RequestID)
	}
	return op, true, nil
}

// forkSource reads the source session and checks it can be forked at all.
func forkSource(ctx context.Context, r Reader, workspaceID, id string) (Session, error) {
	source, err := liveSession(ctx, r, workspaceID, id)
	switch {
	case err != nil:
		return Session{}, err
	case source.Kind != SessionRoot:
		return Session{}, ReasonErrorf(CodeForkConflict, ReasonSourceNotRoot, "session %q is not a root session", id)
	case source.ProviderSessionID == "":
		return Session{}, ReasonErrorf(CodeForkConflict, ReasonProviderSessionMissing,
			"session %q has no provider session", id)
	}
	return source, nil
}

// boundaryTurn reads the turn to fork through and checks it is a settled, provider-bound turn of
// the source.
func boundaryTurn(ctx context.Context, r Reader, source Session, turnID string) (Turn, error) {
	turn, err := r.GetTurn(ctx, source.WorkspaceID, turnID)
	switch {
	case errors.Is(err, ErrNotFound) || (err == nil && turn.SessionID != source.ID):
		return Turn{}, ReasonErrorf(CodeForkConflict, ReasonTurnNotFound,
			"turn %q not found in session %q", turnID, source.ID)
	case err != nil:
		return Turn{}, fmt.Errorf("read turn %s: %w", turnID, err)
	case !turn.Settled():
		return Turn{}, ReasonErrorf(CodeForkConflict, ReasonTurnNotSettled, "turn %q is not settled", turnID)
	case turn.Sequence <= 0:
		return Turn{}, ReasonErrorf(CodeForkConflict, ReasonTurnSequenceMissing, "turn %q has no sequence", turnID)
	case !turn.HasProviderBinding():
		return Turn{}, ReasonErrorf(CodeForkConflict, ReasonProviderTurnMissing,
			"turn %q has no provider binding", turnID)
	}
	return turn, nil
}

// describe resolves the driver descriptor for the source; anything short of a through-turn
// capable descriptor is FORK_UNSUPPORTED.
func (e *Engine) describe(ctx context.Context, source Session) (Descriptor, Driver, error) {
	driver := e.cfg.Drivers[source.Provider]
	if driver == nil {
		return Descriptor{}, nil, Errorf(CodeForkUnsupported, "no fork driver for provider %q", source.Provider)
	}
	desc, err := driver.Describe(ctx, source)
	if errors.Is(err, ErrProviderUnavailable) {
		return Descriptor{}, nil, providerUnavailable(source, err)
	}
	if err != nil {
		return Descriptor{}, nil, &Error{Code: CodeForkUnsupported, Err: err,
			Message: fmt.Sprintf("provider %q cannot describe session %q", source.Provider, source.ID)}
	}
	if !desc.SupportsThroughTurn() {
		return Descriptor{}, nil, Errorf(CodeForkUnsupported,
			"provider %q does not support forking through a turn", source.Provider)
	}
	if problem := descriptorProblem(desc); problem != "" {
		return Descriptor{}, nil, Errorf(CodeForkUnsupported, "provider %q describes itself with %s", source.Provider, problem)
	}
	return desc, driver, nil
}

// descriptorProblem checks the parts of a descriptor an operation stores (its driver kind and
// version) with the rules of the ids they sit beside: a provider's answer with a NUL in its
// version would otherwise fail the insert of the operation on PostgreSQL.
func descriptorProblem(desc Descriptor) string {
	for _, f := range []idField{{"kind", &desc.Kind}, {"version", &desc.Version}} {
		if _, err := cleanID(f.name, *f.value); err != nil {
			return "an invalid " + f.name
		}
	}
	return ""
}

// probeOne asks the driver whether it can fork through one provider turn; an error means no,
// and is returned so an unreachable provider can be told from a refusal.
func (e *Engine) probeOne(ctx context.Context, driver Driver, source Session, turn Turn) (bool, error) {
	answers, err := driver.ProbeTurns(ctx, []Probe{{Session: source, Turn: turn}})
	return err == nil && len(answers) == 1 && answers[0], err
}

// providerUnavailable is the retryable error of a fork requested while its provider is down; no
// operation is created, so the client simply asks again.
func providerUnavailable(source Session, err error) error {
	return &Error{Code: CodeProviderUnavailable, Retryable: true, Err: err,
		Message: fmt.Sprintf("provider %q cannot be reached; try again", source.Provider)}
}

// processInBackground dispatches a prepared operation on its own goroutine. The work is detached
// from the caller's context: the request that started a fork may end long before the fork does.
//
// only is the request's dispatch-only part (environment, provider target ref): it travels with
// this goroutine's context to the one Fork call it may make, and nowhere else.
func (e *Engine) processInBackground(ctx context.Context, op ForkOperation, only *dispatchOnly) {
	detached, end := context.WithoutCancel(ctx), func() {}
	if e.cfg.DetachContext != nil {
		detached, end = e.cfg.DetachContext(ctx)
	}
	detached = withDispatchOnly(detached, op.ID, only)
	// op is what prepare just committed, so it is not read back: a fork that something else moved
	// meanwhile loses its first compare-and-swap and continues from the stored state. The snapshot
	// is copied first (the whole operation: its source binding and the snapshot's boundary are
	// the same turn's), so nothing the caller does with the returned op can reach the background
	// work, which then can trust it without rehashing.
	private := op.Clone()
	e.leases.hold(op.Key())
	started := e.goBackground(func() {
		defer e.leases.release(op.Key())
		defer end()
		if _, err := e.process(detached, private, true); err != nil {
			// Nobody waits for this goroutine; the operation's stored state already tells clients
			// what happened, so the log is the only place left for the cause.
			e.log.Error("fork operation processing failed", "workspace", op.WorkspaceID, "operation", op.ID, "error", err)
		}
	})
	if !started {
		e.leases.release(op.Key()) // closing: the lease expires and a takeover finishes the fork
		end()
	}
}
