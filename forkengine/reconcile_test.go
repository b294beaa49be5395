package forkengine_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// reconcilable scripts the harness driver to say it can reconcile, and makes an unknown
// delivery on turn-1: its fork call answers unknown.
func (h *harness) unknownFork(requestID string) forkengine.ForkOperation {
	h.t.Helper()
	return h.unknownForkThrough(requestID, "turn-1")
}

// unknownForkThrough is unknownFork through another turn.
func (h *harness) unknownForkThrough(requestID, turnID string) forkengine.ForkOperation {
	h.t.Helper()
	desc := forkenginetest.ScriptedDescriptor
	desc.Reconcile = true
	h.driver.SetDescriptor(desc, nil)
	h.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown}})
	op := h.process(h.mustFork(requestID, turnID))
	require.Equal(h.t, forkengine.StatusUnknown, op.Status)
	require.NotNil(h.t, op.NextReconcileAt, "the first attempt is scheduled")
	return op
}

func TestReconcileAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		step      func(forkengine.ReconcileRequest) forkenginetest.ReconcileStep
		status    forkengine.OperationStatus
		reason    string
		scheduled bool
		errorText string // the operation's error afterwards, when the test cares
	}{
		{name: "FoundCommits", status: forkengine.StatusCommitted,
			step: func(r forkengine.ReconcileRequest) forkenginetest.ReconcileStep {
				return forkenginetest.ReconcileStep{Result: forkenginetest.FoundResult(r)}
			}},
		{name: "AbsentFails", status: forkengine.StatusFailed, reason: forkengine.ReasonReconciledAbsent,
			step: func(forkengine.ReconcileRequest) forkenginetest.ReconcileStep {
				return forkenginetest.ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileAbsent}}
			}},
		{name: "UnknownWaits", status: forkengine.StatusUnknown, scheduled: true,
			errorText: "the provider's index is still catching up",
			step: func(forkengine.ReconcileRequest) forkenginetest.ReconcileStep {
				return forkenginetest.ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown,
					Error: "the provider's index is still catching up"}}
			}},
		{name: "UnknownWithoutAnExplanationKeepsTheLastError", status: forkengine.StatusUnknown, scheduled: true,
			errorText: "provider fork delivery is unknown",
			step: func(forkengine.ReconcileRequest) forkenginetest.ReconcileStep {
				return forkenginetest.ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown}}
			}},
		{name: "ErrorWaits", status: forkengine.StatusUnknown, scheduled: true, errorText: "provider call failed",
			step: func(forkengine.ReconcileRequest) forkenginetest.ReconcileStep {
				return forkenginetest.ReconcileStep{Err: errors.New(`Post "http://admin:***@10.0.0.7:18697/reconcile": connection refused`)}
			}},
		{name: "FoundWithAnErrorWaits", status: forkengine.StatusUnknown, scheduled: true,
			errorText: "the provider found a child that does not verify: child made, transcript import failed",
			step: func(r forkengine.ReconcileRequest) forkenginetest.ReconcileStep {
				res := forkenginetest.FoundResult(r)
				res.Error = "child made, transcript import failed"
				return forkenginetest.ReconcileStep{Result: res}
			}},
		{name: "FoundWithAnInvalidChildWaits", status: forkengine.StatusUnknown, scheduled: true,
			errorText: "the provider found a child that does not verify: provider fork result was invalid: the child provider session id is empty",
			step: func(forkengine.ReconcileRequest) forkenginetest.ReconcileStep {
				return forkenginetest.ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileFound}} // no child id
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(1)
			op := h.unknownFork("request-1")
			h.driver.QueueReconcile(tc.step(forkengine.ReconcileRequest{ForkRequest: h.driver.ForkRequests()[0]}))
			got, err := h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
			require.NoError(t, err)
			require.Equal(t, tc.status, got.Status)
			require.Equal(t, tc.reason, got.ErrorReason)
			if tc.errorText != "" {
				require.Equal(t, tc.errorText, got.Error)
			}
			require.Equal(t, 1, got.ReconcileAttempts)
			require.NotNil(t, got.LastReconciledAt)
			require.Equal(t, tc.scheduled, got.NextReconcileAt != nil)
			require.Equal(t, got, h.stored(op.ID), "what it returns is what it stored")
			require.Equal(t, 1, h.driver.ForkCalls(), "reconciliation never calls Fork")
			require.Equal(t, 1, h.driver.ReconcileCalls())
			req := h.driver.ReconcileRequests()[0]
			require.Equal(t, op.RequestID, req.RequestID)
			require.Equal(t, 1, req.Attempt)
			if tc.status == forkengine.StatusCommitted {
				require.Equal(t, "child-"+op.ID, got.TargetProviderSessionID)
				s, err := h.store.GetSession(h.ctx, ws, op.TargetSessionID)
				require.NoError(t, err, "the commit made the target")
				require.Equal(t, op.TargetTitle, s.Title)
			}
		})
	}
}

// The barrier holds while unknown, holds while committed-unacknowledged, and lets go on absent and
// on abandon, so a new request id then makes a new operation.
func TestReconcileAndAbandonReleaseTheBarrier(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		resolve func(h *harness, op forkengine.ForkOperation)
		free    bool
	}{
		{name: "Absent", free: true, resolve: func(h *harness, op forkengine.ForkOperation) {
			h.driver.QueueReconcile(forkenginetest.ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileAbsent}})
			_, err := h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
			require.NoError(h.t, err)
		}},
		{name: "Abandoned", free: true, resolve: func(h *harness, op forkengine.ForkOperation) {
			got, err := h.engine.AbandonForkOperation(h.ctx, ws, op.ID, "the provider lost it")
			require.NoError(h.t, err)
			require.Equal(h.t, forkengine.ReasonAbandoned, got.ErrorReason)
			require.Equal(h.t, "the provider lost it", got.Error)
			again, err := h.engine.AbandonForkOperation(h.ctx, ws, op.ID, "twice")
			require.NoError(h.t, err, "abandon is idempotent")
			require.Equal(h.t, got, again)
		}},
		{name: "FoundAndUnacknowledged", free: false, resolve: func(h *harness, op forkengine.ForkOperation) {
			h.driver.QueueReconcile(forkenginetest.ReconcileStep{Result: forkenginetest.FoundResult(
				forkengine.ReconcileRequest{ForkRequest: h.driver.ForkRequests()[0]})})
			_, err := h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
			require.NoError(h.t, err)
		}},
		{name: "StillUnknown", free: false, resolve: func(h *harness, op forkengine.ForkOperation) {
			_, err := h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
			require.NoError(h.t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(1)
			op := h.unknownFork("request-1")
			tc.resolve(h, op)
			next := h.mustFork("request-2", "turn-1")
			require.Equal(t, tc.free, next.ID != op.ID, "a new request id on the boundary makes a new operation: %t", tc.free)
			require.Equal(t, 1, h.driver.ForkCalls())
		})
	}
}

// Only unknown operations are reconciled or abandoned; the others get a conflict of their own.
func TestReconcileAndAbandonConflicts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	committed := h.process(h.mustFork("request-1", "turn-1"))
	require.Equal(t, forkengine.StatusCommitted, committed.Status)
	_, err := h.engine.ReconcileForkOperation(h.ctx, ws, committed.ID)
	requireCode(t, err, forkengine.CodeReconcileConflict, forkengine.ReasonNotUnknown)
	_, err = h.engine.AbandonForkOperation(h.ctx, ws, committed.ID, "why not")
	requireCode(t, err, forkengine.CodeReconcileConflict, forkengine.ReasonNotUnknown)
	prepared := h.mustFork("request-2", "turn-2")
	_, err = h.engine.AbandonForkOperation(h.ctx, ws, prepared.ID, "why not")
	requireCode(t, err, forkengine.CodeReconcileConflict, forkengine.ReasonNotUnknown)
	_, err = h.engine.ReconcileForkOperation(h.ctx, "other-workspace", committed.ID)
	requireCode(t, err, forkengine.CodeNotFound, "")
	_, err = h.engine.AbandonForkOperation(h.ctx, ws, prepared.ID, "  ")
	requireCode(t, err, forkengine.CodeInvalid, "invalid_reason")
	require.Equal(t, forkengine.StatusPrepared, h.stored(prepared.ID).Status, "nothing changed")
}

// In the background: the lease holder's sweep makes the first attempt once it is due, then backs
// off exponentially, never more than five minutes apart; the schedule is durable, so another engine (a restart, or another instance
// once the lease is gone) goes on from it without repeating or losing an attempt.
func TestBackgroundReconcileBacksOffDurably(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	op := h.unknownFork("request-1")
	sweep := func(e *forkengine.Engine) forkengine.RecoveryReport {
		t.Helper()
		report, err := e.TakeOver(h.ctx)
		require.NoError(t, err)
		require.NoError(t, e.Close(h.ctx)) // wait for the background attempt
		return report
	}
	restart := func() *forkengine.Engine {
		return h.peer(func(c *forkengine.Config) { c.InstanceID = h.engine.InstanceID() })
	}

	require.Zero(t, sweep(restart()).Scanned, "not due before its first delay")
	require.Zero(t, h.driver.ReconcileCalls())
	var gaps []time.Duration
	last := *h.stored(op.ID).NextReconcileAt
	for attempt := 1; attempt <= 10; attempt++ { // out past the cap
		h.advance(last.Sub(h.now) + time.Millisecond)
		require.Equal(t, 1, sweep(restart()).Scanned, "attempt %d is due", attempt)
		require.Equal(t, attempt, h.driver.ReconcileCalls())
		stored := h.stored(op.ID)
		require.Equal(t, attempt, stored.ReconcileAttempts)
		require.Equal(t, forkengine.StatusUnknown, stored.Status)
		gaps = append(gaps, stored.NextReconcileAt.Sub(*stored.LastReconciledAt))
		last = *stored.NextReconcileAt
		require.Zero(t, sweep(restart()).Scanned, "a restart right after attempt %d does not repeat it", attempt)
	}
	capped := 5 * time.Minute
	require.Equal(t, []time.Duration{4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second,
		128 * time.Second, 256 * time.Second, capped, capped, capped}, gaps, "doubling up to the five-minute cap, then staying there")
	// Another instance, once the lease has expired, picks the schedule up where it is.
	h.advance(forkengine.DefaultLeaseDuration + last.Sub(h.now))
	h.driver.QueueReconcile(forkenginetest.ReconcileStep{Result: forkenginetest.FoundResult(
		forkengine.ReconcileRequest{ForkRequest: h.driver.ForkRequests()[0]})})
	require.Equal(t, 1, sweep(h.peer()).Scanned)
	got := h.stored(op.ID)
	require.Equal(t, forkengine.StatusCommitted, got.Status)
	require.Equal(t, 11, got.ReconcileAttempts)
	require.Equal(t, 1, h.driver.ForkCalls(), "never dispatched again")
}

// A driver that cannot reconcile leaves the operation unknown and stops the schedule: only a
// person can resolve it (abandon).
func TestNoReconcilerStopsTheSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	op := h.unknownFork("request-1")
	h.driver.SetDescriptor(forkenginetest.ScriptedDescriptor, nil) // Reconcile: false
	got, err := h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusUnknown, got.Status)
	require.Nil(t, got.NextReconcileAt)
	require.Zero(t, got.ReconcileAttempts)
	require.Zero(t, h.driver.ReconcileCalls())
}

// A turn's pending operation is what a new request on it would get back.
func TestPendingOperations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(4)
	unknown := h.unknownFork("request-unknown") // turn-1
	committed := h.process(h.mustFork("request-committed", "turn-2"))
	acknowledged := h.process(h.mustFork("request-ack", "turn-3"))
	_, err := h.engine.Acknowledge(h.ctx, ws, acknowledged.ID, "")
	require.NoError(t, err)
	turns, err := h.store.TurnsThrough(h.ctx, ws, source, 4)
	require.NoError(t, err)
	got, err := h.engine.PendingOperations(h.ctx, ws, turns)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"turn-1": unknown.ID, "turn-2": committed.ID}, map[string]string{
		"turn-1": got["turn-1"].ID, "turn-2": got["turn-2"].ID})
	require.Len(t, got, 2, "an acknowledged fork and an unforked turn block nothing")
	for turn, op := range got {
		again, err := h.fork("request-new-"+turn, turn)
		require.NoError(t, err)
		require.Equal(t, op.ID, again.ID, "a new request on %s gets the pending operation back", turn)
	}
}

// A sweep that finds only an unknown delivery due for its reconcile attempt counts an attempt,
// not a takeover, and logs nothing at info level: that is the normal course of a lost answer,
// and a single server logged it as if it had taken forks over from a dead instance (issue 27).
func TestADueReconcileAttemptIsNotATakeover(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	op := h.unknownFork("request-1")
	h.advance(op.NextReconcileAt.Sub(h.now) + time.Millisecond)
	var logs bytes.Buffer // written by the background attempt, read after Close waited for it
	e := h.peer(func(c *forkengine.Config) {
		c.InstanceID = h.engine.InstanceID()
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	report, err := e.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, report.Scanned)
	require.Equal(t, 1, report.Reconciled, "the claimed operation is a reconcile attempt")
	require.NoError(t, e.Close(h.ctx))
	require.Equal(t, 1, h.driver.ReconcileCalls())
	require.Empty(t, logs.String(), "an attempt that leaves it unknown is not news")
}
