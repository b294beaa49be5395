package forkengine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// FirstReconcileDelay is when the first reconcile attempt of an unknown delivery falls due: this
// long after the delivery became unknown. Later ones come exponentially further apart, never more
// than maxReconcileDelay (docs/api.md states the schedule and when an attempt is made).
const FirstReconcileDelay = 2 * time.Second

const (
	maxReconcileDelay = 5 * time.Minute
	// maxAbandonReason bounds the reason a person gives for abandoning an operation.
	maxAbandonReason = 1000
)

// reconcileDelay is the wait after the attempt-th attempt: 4s, 8s, 16s, … up to the maximum.
func reconcileDelay(attempt int) time.Duration {
	d := FirstReconcileDelay
	for i := 0; i < attempt && d < maxReconcileDelay; i++ {
		d *= 2
	}
	return min(d, maxReconcileDelay)
}

// becomeUnknown records an unknown delivery and schedules its first reconcile attempt.
func becomeUnknown(record func(*ForkOperation, time.Time)) func(*ForkOperation, time.Time) {
	return func(op *ForkOperation, at time.Time) {
		if record != nil {
			record(op, at)
		}
		next := at.Add(FirstReconcileDelay)
		op.NextReconcileAt = &next
	}
}

// ReconcileForkOperation asks the provider now what became of an unknown delivery and applies
// the answer: found → provider_accepted → committed through the normal commit; absent → failed
// (reason reconciled_absent), which releases the barrier; unknown → the next attempt is
// scheduled. It never calls Fork. An operation that reconciliation already resolved is returned
// as it is (so a repeated call is harmless); one whose lease another live instance holds right
// now (an attempt is under way there) is returned unchanged. On an exclusive store every other
// owner is dead, so their leases never hold an attempt back. Errors: BAD_USER_INPUT (ids), NOT_FOUND,
// RECONCILE_CONFLICT reason not_unknown (committed, failed or active by any other way).
func (e *Engine) ReconcileForkOperation(ctx context.Context, workspaceID, id string) (ForkOperation, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"id", &id}); err != nil {
		return ForkOperation{}, err
	}
	op, err := e.store.GetOperation(ctx, workspaceID, id)
	if err != nil {
		return ForkOperation{}, readError(err, "fork operation", id)
	}
	if op.Status != StatusUnknown {
		if op.ReconcileAttempts > 0 && op.ErrorReason != ReasonAbandoned {
			return op, nil // reconciliation resolved it already
		}
		return ForkOperation{}, notUnknown(op)
	}
	now := e.now()
	c := e.sweepClaim()
	c.Owner, c.Now, c.Until = e.cfg.InstanceID, now, now.Add(e.cfg.LeaseDuration)
	claimed, ok, err := e.store.ClaimOperation(ctx, op.Key(), c)
	if err != nil {
		return ForkOperation{}, readError(err, "fork operation", id)
	}
	if !ok {
		return op, nil
	}
	e.leases.hold(claimed.Key())
	defer e.leases.release(claimed.Key())
	return e.reconcile(ctx, claimed)
}

// AbandonForkOperation is a person giving up on an unknown delivery: the operation fails (reason
// abandoned, with their reason as its error) and its boundary is free for a new fork. A child the
// provider did make is orphaned: forkgraph forgets it. Abandoning it again returns it as it is.
// Errors: BAD_USER_INPUT (ids; reason invalid_reason for a reason that is empty or longer than
// 1000 characters, invalid_text for one that is not valid UTF-8 or holds NUL), NOT_FOUND,
// RECONCILE_CONFLICT reason not_unknown.
func (e *Engine) AbandonForkOperation(ctx context.Context, workspaceID, id, reason string) (ForkOperation, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"id", &id}); err != nil {
		return ForkOperation{}, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" || len(reason) > maxAbandonReason {
		return ForkOperation{}, ReasonErrorf(CodeInvalid, "invalid_reason", "reason must be 1 to %d characters", maxAbandonReason)
	}
	if err := checkStorable("reason", reason); err != nil {
		return ForkOperation{}, err
	}
	var out ForkOperation
	err := e.update(ctx, func(tx Tx, c *changes) error {
		op, err := tx.GetOperation(ctx, workspaceID, id)
		switch {
		case err != nil:
			return readError(err, "fork operation", id)
		case op.Status == StatusFailed && op.ErrorReason == ReasonAbandoned:
			out = op
			return nil
		case op.Status != StatusUnknown:
			return notUnknown(op)
		}
		var moved bool
		out, moved, err = moveOperation(ctx, tx, c, op, StatusFailed, func(next *ForkOperation, at time.Time) {
			next.Error, next.ErrorReason, next.CompletedAt, next.NextReconcileAt = reason, ReasonAbandoned, &at, nil
		})
		if err == nil && !moved {
			return notUnknown(out) // a reconcile answer won the race
		}
		return err
	})
	if err != nil {
		return ForkOperation{}, fmt.Errorf("abandon fork operation %s: %w", id, err)
	}
	return out, nil
}

func notUnknown(op ForkOperation) error {
	_, phase := op.Status.Public()
	return ReasonErrorf(CodeReconcileConflict, ReasonNotUnknown,
		"fork operation %s is %s, not DELIVERY_UNKNOWN", op.ID, strings.ToUpper(string(phase)))
}

// reconcile makes one attempt on an unknown operation this engine holds. Failures to reach the
// provider are an unknown answer; the returned error is for local writes that failed, which
// leave the operation unknown and its schedule where it was.
func (e *Engine) reconcile(ctx context.Context, claimed ForkOperation) (ForkOperation, error) {
	op, err := e.store.GetOperation(ctx, claimed.WorkspaceID, claimed.ID) // with its snapshot
	if err != nil {
		return claimed, readError(err, "fork operation", claimed.ID)
	}
	if op.Status != StatusUnknown || !e.drives(op) {
		return op, nil
	}
	driver := e.cfg.Drivers[op.Provider]
	reconciler, can := driver.(Reconciler)
	var desc Descriptor
	if can {
		desc, err = driver.Describe(ctx, op.Snapshot.Session)
		can = err == nil && desc.Reconcile
	}
	// From here on every write records an answer (or that none can come) as a checkpoint: on a
	// context the sweep's end cannot cancel, with deadlines taken once the answer is in, so a
	// slow provider call cannot have spent them.
	if !can && err == nil {
		// Nothing can answer for this provider: stop asking. A person can still abandon it.
		return e.recordTouch(ctx, op, func(next *ForkOperation, _ time.Time) { next.NextReconcileAt = nil })
	}
	attempt := op.ReconcileAttempts + 1
	var res ReconcileResult
	if can {
		callCtx, stop := context.WithTimeout(ctx, e.cfg.DispatchTimeout)
		res, err = reconciler.Reconcile(callCtx, ReconcileRequest{ForkRequest: forkRequest(op, desc), Attempt: attempt})
		stop()
	}
	tried := func(next *ForkOperation, at time.Time) {
		next.ReconcileAttempts, next.LastReconciledAt, next.NextReconcileAt = attempt, &at, nil
	}
	if err != nil {
		// The operation shows the adapter's explanation or a fixed text; the failure itself,
		// the adapter's address included, is for the log.
		e.log.Warn("provider reconcile call failed", "workspace", op.WorkspaceID, "operation", op.ID,
			"attempt", attempt, "error", err)
	}
	why := providerErrorText(ForkResult{Error: res.Error}, err, false) // the adapter's, or a fixed one
	var recorded ForkOperation
	switch {
	case err == nil && res.Answer == ReconcileFound:
		v := judgeDelivery(op, desc, ForkResult{Disposition: DispositionAccepted, ProviderSessionID: res.ProviderSessionID,
			StateBindingMode: res.StateBindingMode, TurnBindings: res.TurnBindings, Receipt: res.Receipt,
			Error: res.Error}, nil, false) // an error makes it unverifiable, as on an accepted fork
		if v.status == StatusProviderAccepted {
			recorded, err = e.acceptReconciled(ctx, op, v, tried)
			if !errors.Is(err, errChildOwned) {
				return e.reconcileRecorded(ctx, op, recorded, err, tried)
			}
			v, err = childOwnedVerdict(), nil
		}
		why = "the provider found a child that does not verify: " + v.text
		e.log.Warn("reconcile found a child that does not verify; asking again later", "operation", op.ID, "problem", v.text)
	case err == nil && res.Answer == ReconcileAbsent:
		absent := func(text string) func(*ForkOperation, time.Time) {
			return func(next *ForkOperation, at time.Time) {
				tried(next, at)
				next.Error, next.ErrorReason, next.CompletedAt = text, ReasonReconciledAbsent, &at
			}
		}
		text := orText(cleanProviderText(res.Error), "the provider reports that no child exists for this request")
		recorded, err = e.record(ctx, op, StatusFailed, absent(text))
		if err != nil { // the answer stands; only its explanation could not be kept
			e.log.Error("recording a reconcile answer failed; recording it with a fixed text",
				"workspace", op.WorkspaceID, "operation", op.ID, "answer", res.Answer, "error", err)
			recorded, err = e.record(ctx, op, StatusFailed, absent(errTextUnrecordable))
		}
		return e.reconcileRecorded(ctx, op, recorded, err, tried)
	}
	// Still unknown: the status stays, but the latest explanation is what a person reads on the
	// operation (an answer without one leaves the last explanation in place).
	why = cleanProviderText(why)
	recorded, err = e.recordTouch(ctx, op, func(next *ForkOperation, at time.Time) {
		tried(next, at)
		later := at.Add(reconcileDelay(attempt))
		next.NextReconcileAt = &later
		if why != "" {
			next.Error = why
		}
	})
	return e.reconcileRecorded(ctx, op, recorded, err, tried)
}

// reconcileRecorded passes on an attempt whose answer was written. One whose answer could not be
// written is recorded as an attempt with the fixed errTextUnrecordable: it counts, and the next
// one is scheduled, so an answer no store can keep costs one attempt instead of being asked for
// again at every sweep, for ever. When even that write fails (the database is down), the error
// is returned and the schedule stays where it was.
func (e *Engine) reconcileRecorded(ctx context.Context, op, recorded ForkOperation, cause error,
	tried func(*ForkOperation, time.Time)) (ForkOperation, error) {
	if cause == nil {
		return recorded, nil
	}
	e.log.Error("recording a reconcile answer failed; recording the attempt with a fixed text",
		"workspace", op.WorkspaceID, "operation", op.ID, "error", cause)
	out, err := e.recordTouch(ctx, op, func(next *ForkOperation, at time.Time) {
		tried(next, at)
		later := at.Add(reconcileDelay(next.ReconcileAttempts))
		next.NextReconcileAt, next.Error = &later, errTextUnrecordable
	})
	if err != nil {
		return op, fmt.Errorf("record reconcile attempt on fork operation %s: %w (recording its answer: %v)", op.ID, err, cause)
	}
	return out, nil
}

// acceptReconciled commits a found child through the normal commit, recording the attempt; when
// that transaction fails it records the acceptance alone, and the commit follows from
// provider_accepted, exactly as after a dispatch. Each write is a checkpoint of its own.
func (e *Engine) acceptReconciled(ctx context.Context, op ForkOperation, v verdict, tried func(*ForkOperation, time.Time)) (ForkOperation, error) {
	record := v.record
	v.record = func(next *ForkOperation, at time.Time) {
		if record != nil {
			record(next, at)
		}
		tried(next, at)
	}
	var committed ForkOperation
	err := e.checkpointOnce(ctx, func(ctx context.Context) (err error) {
		committed, err = e.acceptAndCommit(ctx, op, v, false)
		return err
	})
	if err == nil || errors.Is(err, errChildOwned) {
		return committed, err
	}
	e.log.Warn("commit of a reconciled fork failed; recording the acceptance alone", "operation", op.ID, "error", err)
	accepted := op
	err = e.checkpoint(ctx, func(ctx context.Context) (err error) {
		accepted, err = e.recordAcceptance(ctx, op, v)
		return err
	})
	if err != nil {
		return accepted, err
	}
	return e.commit(ctx, accepted)
}

// recordTouch is touch as a checkpoint: bookkeeping that records a provider's answer.
func (e *Engine) recordTouch(ctx context.Context, op ForkOperation, edit func(*ForkOperation, time.Time)) (ForkOperation, error) {
	out := op
	err := e.checkpoint(ctx, func(ctx context.Context) (err error) {
		out, err = e.touch(ctx, op, edit)
		return err
	})
	return out, err
}

// touch writes bookkeeping on an operation without changing its status (swapOperation), and logs
// it so live readers see the attempt.
func (e *Engine) touch(ctx context.Context, op ForkOperation, edit func(*ForkOperation, time.Time)) (ForkOperation, error) {
	out := op
	err := e.update(ctx, func(tx Tx, c *changes) error {
		next := op
		next.UpdatedAt = c.at
		edit(&next, c.at)
		var err error
		out, _, err = swapOperation(ctx, tx, c, op, next)
		return err
	})
	return out, err
}
