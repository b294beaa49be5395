package forkengine

import (
	"context"
	"fmt"
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
	var after PageCursor
	for {
		page, err := e.store.RecoverableOperations(ctx, after, e.cfg.RecoveryPageSize)
		if err != nil {
			return report, fmt.Errorf("recover: read operations after %v: %w", after, err)
		}
		for _, op := range page {
			if err := ctx.Err(); err != nil {
				return report, fmt.Errorf("recover: %w", err)
			}
			report.Scanned++
			e.recoverOne(ctx, op, &report)
		}
		if len(page) < e.cfg.RecoveryPageSize {
			return report, nil
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
