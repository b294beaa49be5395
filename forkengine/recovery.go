package forkengine

import (
	"context"
	"fmt"
	"time"
)

// Recover finishes what a previous process left behind (SPEC §2.7). It pages through every active
// operation of every workspace in creation order: a dispatching operation may or may not have
// reached its provider, so it becomes unknown without a driver call; a prepared one never reached
// it and is dispatched now; a provider_accepted one is committed without calling the provider
// again. Failed and unknown outcomes are counted, not errors. Errors of single operations are
// collected in the report and recovery goes on; the returned error is for a failed page read or
// an ended ctx.
func (e *Engine) Recover(ctx context.Context) (RecoveryReport, error) {
	var report RecoveryReport
	err := e.eachRecoverable(ctx, func(op ForkOperation) {
		report.Scanned++
		e.recoverOne(ctx, op, &report)
	})
	return report, err
}

// eachRecoverable pages through every active operation of every workspace in creation order,
// calling fn for each. It stops with an error when a page cannot be read or ctx ends.
func (e *Engine) eachRecoverable(ctx context.Context, fn func(ForkOperation)) error {
	var after PageCursor
	for {
		page, err := e.store.RecoverableOperations(ctx, after, e.cfg.RecoveryPageSize)
		if err != nil {
			return fmt.Errorf("recover: read operations after %v: %w", after, err)
		}
		for _, op := range page {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			fn(op)
		}
		if len(page) < e.cfg.RecoveryPageSize {
			return nil
		}
		last := page[len(page)-1]
		after = PageCursor{Time: last.CreatedAt, ID: last.ID}
	}
}

func (e *Engine) recoverOne(ctx context.Context, op ForkOperation, report *RecoveryReport) {
	var err error
	switch op.Status {
	case StatusDispatching:
		op, _, err = e.transition(ctx, op, StatusUnknown, settle(errTextUnknownRestart))
	case StatusPrepared, StatusProviderAccepted:
		op, err = e.ProcessOperation(ctx, op.WorkspaceID, op.ID)
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
// the part no new work may overlap (every dispatching operation becomes unknown, with no driver
// call, so nothing started later can be mistaken for a leftover), and hands the prepared and
// provider_accepted operations to one background worker, whose driver calls may each take up to
// DispatchTimeout. The report counts the unknown ones and, in Resumed, the operations handed on;
// Close waits for them. Running them beside new requests is safe: every step is a compare and
// swap, so an operation is still dispatched at most once. The returned error is for a failed page
// read or an ended ctx.
func (e *Engine) StartRecovery(ctx context.Context) (RecoveryReport, error) {
	var report RecoveryReport
	var resume []ForkOperation
	err := e.eachRecoverable(ctx, func(op ForkOperation) {
		report.Scanned++
		if op.Status == StatusDispatching {
			e.recoverOne(ctx, op, &report)
			return
		}
		resume = append(resume, op)
	})
	if err != nil {
		return report, err
	}
	report.Resumed = len(resume)
	if len(resume) > 0 {
		background := context.WithoutCancel(ctx)
		e.goBackground(func() { e.resumeRecovered(background, resume) })
	}
	return report, nil
}

// resumeRecovered drives the operations StartRecovery handed on, one at a time, logging what
// went wrong with any of them.
func (e *Engine) resumeRecovered(ctx context.Context, ops []ForkOperation) {
	var report RecoveryReport
	for _, op := range ops {
		e.recoverOne(ctx, op, &report)
	}
	for _, err := range report.Errors {
		e.cfg.Logger.Error("start-up recovery", "err", err)
	}
	e.cfg.Logger.Info("start-up recovery finished in the background", "committed", report.Committed,
		"failed", report.Failed, "unknown", report.Unknown, "errors", len(report.Errors))
}

// ResumeStalled drives operations that have sat prepared or provider_accepted for longer than
// olderThan: their own background work met a passing failure (a busy database, a lost write) and
// nothing else would move them before the next restart, while the barrier keeps their boundary
// blocked. Dispatching operations are left alone: their driver call may still be running. Safe
// beside live work, since every step is a compare and swap. Errors of single operations are in
// the report; the returned error is for a failed page read or an ended ctx.
func (e *Engine) ResumeStalled(ctx context.Context, olderThan time.Duration) (RecoveryReport, error) {
	var report RecoveryReport
	cutoff := e.cfg.Clock().Add(-olderThan)
	err := e.eachRecoverable(ctx, func(op ForkOperation) {
		if op.Status == StatusDispatching || op.UpdatedAt.After(cutoff) {
			return
		}
		report.Scanned++
		e.recoverOne(ctx, op, &report)
	})
	return report, err
}
