package forkengine

import (
	"context"
	"fmt"
	"sync"
)

// Recover finishes what a previous run left behind (SPEC §2.7), as a takeover: it claims every
// unfinished operation whose lease is free (expired, or never taken), leased to this instance's
// own id (a restart with a fixed -instance-id), or, on a store only this process can open
// (Config.ExclusiveStore), every one, and pages through them in creation order. A dispatching
// operation may or may not have reached its provider, so it becomes unknown without a driver
// call; a prepared one never reached it and is dispatched now; a provider_accepted one is
// committed without calling the provider again. Operations another live instance holds are left
// alone. Failed and unknown outcomes are counted, not errors. Errors of single operations are
// collected in the report and recovery goes on; the returned error is for a failed claim or an
// ended ctx.
func (e *Engine) Recover(ctx context.Context) (RecoveryReport, error) {
	var report RecoveryReport
	err := e.eachClaimed(ctx, e.startUpClaim(), func(op ForkOperation) {
		report.Scanned++
		e.leases.hold(op.Key())
		defer e.leases.release(op.Key())
		e.recoverOne(ctx, op, &report)
	})
	return report, err
}

// startUpClaim is what a starting instance takes over.
func (e *Engine) startUpClaim() LeaseClaim {
	return LeaseClaim{TakeOwn: true, TakeAll: e.cfg.ExclusiveStore}
}

func (e *Engine) recoverOne(ctx context.Context, op ForkOperation, report *RecoveryReport) {
	var err error
	switch op.Status {
	case StatusDispatching:
		op, _, err = e.transition(ctx, op, StatusUnknown, becomeUnknown(settle(errTextUnknownRestart)))
	case StatusPrepared, StatusProviderAccepted:
		op, err = e.ProcessOperation(ctx, op.WorkspaceID, op.ID)
	case StatusUnknown: // its reconcile attempt is due
		report.Reconciled++
		op, err = e.reconcile(ctx, op)
	}
	if err != nil {
		report.Errors = append(report.Errors, fmt.Errorf("recover fork operation %s: %w", op.ID, err))
		return
	}
	switch op.Status {
	case StatusUnknown:
		report.Unknown++
	case StatusCommitted:
		report.Committed++
	case StatusFailed:
		report.Failed++
	}
}

// StartRecovery is Recover for a server that must listen soon: it finishes before returning only
// the part no new work may overlap (every dispatching operation it takes over becomes unknown,
// with no driver call, so nothing started later can be mistaken for a leftover), and hands the
// prepared and provider_accepted operations, and the unknown ones due for a reconcile attempt, to
// background work, up to takeoverWorkers at a time, whose driver calls may each take up to
// DispatchTimeout. The report counts the unknown ones and, in Resumed, the
// operations handed on; Close waits for them. Running them beside new requests is safe: every
// step is a compare and swap, so an operation is still dispatched at most once. The returned
// error is for a failed claim or an ended ctx.
func (e *Engine) StartRecovery(ctx context.Context) (RecoveryReport, error) {
	return e.startTakeover(ctx, e.startUpClaim())
}

// startTakeover claims what c allows, settles the dispatching ones now and drives the rest in
// the background, holding (and so renewing) their leases until done.
func (e *Engine) startTakeover(ctx context.Context, c LeaseClaim) (RecoveryReport, error) {
	var report RecoveryReport
	var resume []ForkOperation
	err := e.eachClaimed(ctx, c, func(op ForkOperation) {
		if e.leases.holds(op.Key()) {
			return // still being driven here; the claim only renewed its lease
		}
		report.Scanned++
		if op.Status == StatusUnknown {
			report.Reconciled++ // due for a reconcile attempt, made in the background below
		}
		if op.Status == StatusDispatching {
			e.leases.hold(op.Key())
			defer e.leases.release(op.Key())
			e.recoverOne(ctx, op, &report)
			return
		}
		resume = append(resume, op)
	})
	if len(resume) == 0 {
		return report, err
	}
	for _, op := range resume {
		e.leases.hold(op.Key())
	}
	background := context.WithoutCancel(ctx)
	started := e.goBackground(func() { e.resumeRecovered(background, resume) })
	if !started { // closing: the leases expire and whoever runs next takes the work over
		for _, op := range resume {
			e.leases.release(op.Key())
		}
		return report, err
	}
	report.Resumed = len(resume)
	return report, err
}

// takeoverWorkers bounds how many taken-over operations an engine drives at once, over all its
// takeovers: enough that slow provider calls (each up to DispatchTimeout) do not hold back the
// reconcile attempts and dispatches claimed beside them, few enough that a start-up with a long
// backlog does not flood a provider.
const takeoverWorkers = 32

// resumeRecovered drives the operations a takeover handed on, each as soon as one of the
// engine's takeoverWorkers slots is free, logging what went wrong with any of them, and releases
// their leases.
func (e *Engine) resumeRecovered(ctx context.Context, ops []ForkOperation) {
	reports := make([]RecoveryReport, len(ops))
	var wg sync.WaitGroup
	for i, op := range ops {
		e.takeoverSlots <- struct{}{} // waits here, not in a goroutine: a long backlog costs no stacks
		wg.Go(func() {
			defer func() { <-e.takeoverSlots }()
			e.recoverOne(ctx, op, &reports[i])
			e.leases.release(op.Key())
		})
	}
	wg.Wait()
	var report RecoveryReport
	for _, r := range reports {
		report.add(r)
	}
	for _, err := range report.Errors {
		e.cfg.Logger.Error("fork recovery", "err", err)
	}
	if report.Reconciled == len(ops) && len(report.Errors) == 0 {
		// Only reconcile attempts on unknown deliveries: the normal course of a lost answer.
		e.cfg.Logger.Debug("reconcile attempts finished", "committed", report.Committed,
			"failed", report.Failed, "still unknown", report.Unknown)
		return
	}
	e.cfg.Logger.Info("fork recovery finished in the background", "committed", report.Committed,
		"failed", report.Failed, "unknown", report.Unknown, "errors", len(report.Errors))
}

// add counts o's outcomes into r.
func (r *RecoveryReport) add(o RecoveryReport) {
	r.Scanned += o.Scanned
	r.Unknown += o.Unknown
	r.Committed += o.Committed
	r.Failed += o.Failed
	r.Resumed += o.Resumed
	r.Reconciled += o.Reconciled
	r.Errors = append(r.Errors, o.Errors...)
}
