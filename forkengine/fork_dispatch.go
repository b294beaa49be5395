package forkengine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ProcessOperation drives one operation as far as it can go now: a prepared operation is
// re-verified and dispatched to its driver (at most once: the move to dispatching is persisted
// before the call), a provider_accepted one is committed. Dispatching, committed, failed and
// unknown operations, and any operation leased to another instance, are returned unchanged,
// without a driver call. Background work and recovery
// use it. Failed and unknown outcomes are data, not errors. Errors: BAD_USER_INPUT (ids),
// NOT_FOUND, and internal errors of the store.
func (e *Engine) ProcessOperation(ctx context.Context, workspaceID, id string) (ForkOperation, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"id", &id}); err != nil {
		return ForkOperation{}, err
	}
	op, err := e.store.GetOperation(ctx, workspaceID, id)
	if err != nil {
		return ForkOperation{}, readError(err, "fork operation", id)
	}
	e.leases.hold(op.Key()) // renewed while the driver call is out
	defer e.leases.release(op.Key())
	return e.process(ctx, op, false)
}

// process drives op from the state it was read or written in. Every step is a compare-and-swap
// on that state and lease owner, so a stale op loses the swap and continues from the stored state
// instead, unless that state is leased to another instance: then this one stops, before each
// step, not only the first (an instance whose lease was taken over while it re-verified would
// otherwise go on to dispatch the new holder's operation, on a lease nobody renews). own says op
// carries the engine's private copy of the snapshot it froze (not one read back from the store);
// it holds only until the first step, after which op may come from a read.
func (e *Engine) process(ctx context.Context, op ForkOperation, own bool) (ForkOperation, error) {
	var err error
	for ; ; own = false {
		if !e.drives(op) {
			return op, nil // another instance holds it; a takeover claims it first if that one dies
		}
		switch op.Status {
		case StatusPrepared:
			op, err = e.dispatch(ctx, op, own)
		case StatusProviderAccepted:
			op, err = e.commit(ctx, op)
		default:
			return op, nil
		}
		if err != nil {
			return op, fmt.Errorf("process fork operation %s: %w", op.ID, err)
		}
	}
}

// dispatch moves a prepared operation through dispatching to the provider's verdict.
func (e *Engine) dispatch(ctx context.Context, op ForkOperation, own bool) (ForkOperation, error) {
	desc, driver, problem, err := e.verifyBeforeDispatch(ctx, op)
	if err != nil {
		return op, err
	}
	if problem != "" {
		failed, _, err := e.transition(ctx, op, StatusFailed, settle(problem))
		return failed, err
	}
	marked, moved, err := e.transition(ctx, op, StatusDispatching, func(next *ForkOperation, at time.Time) {
		next.DispatchedAt = &at
	})
	if err != nil || !moved {
		return marked, err // another worker got there first; the caller continues from its state
	}
	verdict := e.callFork(ctx, driver, marked, desc)
	// The provider has answered: record that as checkpoints (detached from the caller, with
	// deadlines taken from now on), or a child the provider made could be forgotten.
	return e.recordDelivery(ctx, marked, verdict, own)
}

// recordDelivery records the verdict of marked's Fork call. An acceptance is committed in the same
// transaction when it can be; when that fails, nothing of it was written, and the acceptance is
// recorded alone, so the child is never forgotten (its commit is retried from provider_accepted).
// A child another workspace owns makes the answer invalid (unknown). Whatever cannot be recorded
// as it was is recorded with a fixed text (recordUnrecordable). Each write is a checkpoint of its
// own, so none runs on what an earlier one left of a shared deadline: the combined commit gets
// one try, every write after it the retries of checkpoint.
func (e *Engine) recordDelivery(ctx context.Context, marked ForkOperation, v verdict, own bool) (ForkOperation, error) {
	if v.status == StatusProviderAccepted {
		var committed ForkOperation
		err := e.checkpointOnce(ctx, func(ctx context.Context) (err error) {
			committed, err = e.acceptAndCommit(ctx, marked, v, own)
			return err
		})
		if err == nil {
			return committed, nil
		}
		if !errors.Is(err, errChildOwned) {
			e.log.Warn("fork commit with the acceptance failed; recording the acceptance alone",
				"workspace", marked.WorkspaceID, "operation", marked.ID, "error", err)
			accepted := marked
			err := e.checkpoint(ctx, func(ctx context.Context) (err error) {
				accepted, err = e.recordAcceptance(ctx, marked, v)
				return err
			})
			if err == nil {
				return accepted, nil
			}
			if !errors.Is(err, errChildOwned) {
				return e.recordUnrecordable(ctx, marked, v, err)
			}
		}
		e.log.Warn("the provider answered with a child another workspace owns", "workspace", marked.WorkspaceID,
			"operation", marked.ID)
		v = childOwnedVerdict()
	}
	recorded, err := e.record(ctx, marked, v.status, v.record)
	if err != nil {
		return e.recordUnrecordable(ctx, marked, v, err)
	}
	return recorded, nil
}

// record moves op to status as a checkpoint: a provider's answer that must not be lost.
func (e *Engine) record(ctx context.Context, op ForkOperation, to OperationStatus, edit func(*ForkOperation, time.Time)) (ForkOperation, error) {
	recorded := op
	err := e.checkpoint(ctx, func(ctx context.Context) (err error) {
		recorded, _, err = e.transition(ctx, op, to, edit)
		return err
	})
	return recorded, err
}

// recordUnrecordable records a provider's answer that could not be written as it was, with the
// fixed errTextUnrecordable in place of its details: a refusal is still a failure, a child the
// provider made (an acceptance) becomes unknown, for reconciliation to ask about again, and an
// unknown stays unknown. Left unrecorded, the operation would stay dispatching until its lease
// expired, and then become unknown whatever the provider had said, so a refused fork could be
// reconciled into a committed one. When even this write fails (the database is down) the error
// is returned and the lease's expiry is what resolves the operation.
func (e *Engine) recordUnrecordable(ctx context.Context, marked ForkOperation, v verdict, cause error) (ForkOperation, error) {
	e.log.Error("recording the provider's answer failed; recording it with a fixed text",
		"workspace", marked.WorkspaceID, "operation", marked.ID, "status", v.status, "error", cause)
	status, record := v.status, settle(errTextUnrecordable)
	if status != StatusFailed {
		status, record = StatusUnknown, becomeUnknown(record)
	}
	recorded, err := e.record(ctx, marked, status, record)
	if err != nil {
		return marked, fmt.Errorf("record the answer to fork operation %s: %w (recording it as it was: %v)", marked.ID, err, cause)
	}
	return recorded, nil
}

// acceptAndCommit records the provider's acceptance and commits the fork in one transaction, the
// common case, saving a transaction per fork. The row goes from dispatching straight to
// committed (one UPDATE, not two); the acceptance is still logged as its own event, so the event
// stream shows every transition. If another writer moved the operation first, nothing is written
// and the stored operation is returned unchanged. own: see process.
func (e *Engine) acceptAndCommit(ctx context.Context, marked ForkOperation, v verdict, own bool) (ForkOperation, error) {
	if !CanTransition(marked.Status, StatusProviderAccepted) {
		return marked, fmt.Errorf("fork operation %s: illegal transition %s -> %s", marked.ID, marked.Status, StatusProviderAccepted)
	}
	var out ForkOperation
	err := e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(marked.WorkspaceID, marked.TargetSessionID)); err != nil {
			return err
		}
		accepted := marked
		accepted.Status, accepted.UpdatedAt = StatusProviderAccepted, c.at
		if v.record != nil {
			v.record(&accepted, c.at)
		}
		c.operation(accepted)
		var err error
		out, err = materialize(ctx, tx, c, accepted, !own, marked.Status)
		return err
	})
	if errors.Is(err, errOperationMoved) {
		current, rerr := e.store.GetOperation(ctx, marked.WorkspaceID, marked.ID)
		if rerr != nil {
			return marked, readError(rerr, "fork operation", marked.ID)
		}
		return current, nil
	}
	return out, err
}

// verifyBeforeDispatch checks that what was frozen still holds: the source has the same provider
// session, the boundary turn the same provider turn, and the driver the same kind and version. A
// broken promise comes back as problem (the operation fails without a driver call); err is for
// failures to read, which leave the operation prepared for a later attempt.
func (e *Engine) verifyBeforeDispatch(ctx context.Context, op ForkOperation) (Descriptor, Driver, string, error) {
	if through, ok := op.Snapshot.through(); !ok || through.ID != op.ThroughTurnID {
		return Descriptor{}, nil, "frozen snapshot does not end with the boundary turn", nil
	}
	source, found, err := findSession(ctx, e.store, op.WorkspaceID, op.SourceSessionID)
	switch {
	case err != nil:
		return Descriptor{}, nil, "", err
	case !found || source.Deleted():
		return Descriptor{}, nil, "source session no longer exists", nil
	case source.ProviderSessionID != op.SourceProviderSessionID:
		return Descriptor{}, nil, "source provider session changed since the fork was prepared", nil
	}
	turn, err := e.store.GetTurn(ctx, op.WorkspaceID, op.ThroughTurnID)
	switch {
	case errors.Is(err, ErrNotFound):
		return Descriptor{}, nil, "boundary turn no longer exists", nil
	case err != nil:
		return Descriptor{}, nil, "", fmt.Errorf("read turn %s: %w", op.ThroughTurnID, err)
	case turn.ProviderTurnID != op.SourceProviderTurnID:
		return Descriptor{}, nil, "boundary provider turn changed since the fork was prepared", nil
	}
	desc, driver, err := e.describe(ctx, source)
	switch {
	case err != nil:
		// The operation's error is read by every client of the workspace; the driver's own error
		// (an unreachable adapter's URL) is for the log.
		e.log.Warn("fork driver describe failed before dispatch", "workspace", op.WorkspaceID, "operation", op.ID, "error", err)
		return Descriptor{}, nil, clientText(err), nil
	case desc.Kind != op.DriverKind || desc.Version != op.DriverVersion:
		return Descriptor{}, nil, fmt.Sprintf("fork driver changed from %s/%s to %s/%s since the fork was prepared (%s)",
			op.DriverKind, op.DriverVersion, desc.Kind, desc.Version, ReasonDriverDrift), nil
	}
	return desc, driver, "", nil
}

// callFork makes the one driver call of an operation, bounded by DispatchTimeout.
func (e *Engine) callFork(ctx context.Context, driver Driver, op ForkOperation, desc Descriptor) verdict {
	callCtx, cancel := context.WithTimeout(ctx, e.cfg.DispatchTimeout)
	defer cancel()
	req := forkRequest(op, desc)
	if only := dispatchOnlyFrom(ctx, op.ID); only != nil {
		req.Environment, req.ProviderTargetRef = append([]EnvironmentVariable(nil), only.environment...), only.providerTargetRef
	}
	result, err := driver.Fork(callCtx, req)
	timedOut := err != nil && errors.Is(callCtx.Err(), context.DeadlineExceeded)
	if err != nil {
		// The operation shows the provider's explanation or a fixed text (providerErrorText);
		// what went wrong on the way, addresses included, is for the log.
		e.log.Warn("provider fork call failed", "workspace", op.WorkspaceID, "operation", op.ID,
			"provider", op.Provider, "disposition", result.Disposition, "timedOut", timedOut, "error", err)
	}
	v := judgeDelivery(op, desc, result, err, timedOut)
	if v.status == StatusUnknown {
		v.record = becomeUnknown(v.record)
	}
	return v
}

// forkRequest is what the driver is told of op's fork: the source, the boundary and the prefix's
// counts as frozen, the target. Its values are copies: what a driver does to its request never
// reaches the operation it came from (reference scenario 38).
func forkRequest(op ForkOperation, desc Descriptor) ForkRequest {
	through, _ := op.Snapshot.through()
	prefix, bound := prefixCounts(op.Snapshot)
	return ForkRequest{
		WorkspaceID: op.WorkspaceID, RequestedBy: op.RequestedBy, OperationID: op.ID, RequestID: op.RequestID,
		Source: op.Snapshot.Session.Clone(), ThroughTurn: through.Clone(), PrefixTurns: prefix, BoundTurns: bound,
		TargetSessionID: op.TargetSessionID, TargetTitle: op.TargetTitle, Target: op.TargetValues(), Descriptor: desc,
	}
}

// prefixCounts are the frozen prefix's turns and provider-bound turns: counted at the freeze
// (version 2), or from the copied prefix (version 1).
func prefixCounts(s Snapshot) (turns, bound int) {
	if s.Shared() {
		return s.PrefixTurns, s.BoundTurns
	}
	for _, t := range s.Turns {
		if t.HasProviderBinding() {
			bound++
		}
	}
	return len(s.Turns), bound
}
