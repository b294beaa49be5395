package forkengine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// poison marks a text the poisonedStore cannot keep, as PostgreSQL could not keep a NUL before
// provider texts were cleaned.
const poison = "poison"

// poisonedStore refuses every operation update whose error or child provider session holds
// poison, standing in for any answer a database cannot store, whatever the reason.
type poisonedStore struct{ forkengine.Store }

func (s poisonedStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	return s.Store.Update(ctx, func(tx forkengine.Tx) error { return fn(poisonedTx{tx}) })
}

type poisonedTx struct{ forkengine.Tx }

func (tx poisonedTx) UpdateOperation(ctx context.Context, op forkengine.ForkOperation, expect forkengine.OperationStatus) (bool, error) {
	if strings.Contains(op.Error, poison) || strings.Contains(op.TargetProviderSessionID, poison) {
		return false, errors.New("invalid byte sequence for encoding \"UTF8\": 0x00 (SQLSTATE 22021)")
	}
	return tx.Tx.UpdateOperation(ctx, op, expect)
}

func withPoisonedStore(cfg *forkengine.Config) { cfg.Store = poisonedStore{cfg.Store} }

// An answer whose recording fails is recorded with a fixed text instead, never left
// dispatching: a refusal stays a failure (so nothing can reconcile it into a commit later), an
// unknown stays unknown with its first attempt scheduled.
func TestUnrecordableForkAnswerIsRecordedWithAFixedText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		disposition forkengine.Disposition
		want        forkengine.OperationStatus
	}{
		{"FailedWhenRejected", forkengine.DispositionRejected, forkengine.StatusFailed},
		{"FailedWhenNotStarted", forkengine.DispositionNotStarted, forkengine.StatusFailed},
		{"UnknownWhenUnknown", forkengine.DispositionUnknown, forkengine.StatusUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, withPoisonedStore)
			h.seed(1)
			h.driver.QueueFork(forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: tc.disposition,
				Error: "the provider says " + poison}})
			op := h.forkAndProcess("r", "turn-1")
			require.Equal(t, tc.want, op.Status)
			require.Equal(t, "the provider's answer could not be recorded", op.Error)
			stored := h.stored(op.ID)
			require.Equal(t, tc.want, stored.Status, "the store holds the answer, not dispatching")
			if tc.want == forkengine.StatusUnknown {
				require.NotNil(t, stored.NextReconcileAt, "reconciliation will ask")
			}
		})
	}
}

// An acceptance whose recording fails (the commit, then the acceptance alone) becomes unknown:
// the child may exist, so the fork is never dispatched again, and reconciliation asks for it.
func TestUnrecordableAcceptanceBecomesUnknown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withPoisonedStore)
	h.seed(1)
	h.driver.QueueFork(forkenginetest.ForkStep{Func: func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
		res := forkenginetest.AcceptedResult(req)
		res.ProviderSessionID = "child-" + poison // a valid id, which this store cannot keep
		return res, nil
	}})
	op := h.forkAndProcess("r", "turn-1")
	require.Equal(t, forkengine.StatusUnknown, op.Status)
	require.Equal(t, "the provider's answer could not be recorded", op.Error)
	stored := h.stored(op.ID)
	require.Equal(t, forkengine.StatusUnknown, stored.Status)
	require.NotNil(t, stored.NextReconcileAt)
	require.Equal(t, 1, h.driver.ForkCalls(), "never dispatched again")
}

// A reconcile answer whose recording fails is recorded as an attempt with a fixed text: it
// counts, and the next one is scheduled, instead of being asked again at every sweep.
func TestUnrecordableReconcileAnswerIsCountedWithAFixedText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer forkengine.ReconcileAnswer
		want   forkengine.OperationStatus
	}{
		{"UnknownCounted", forkengine.ReconcileUnknown, forkengine.StatusUnknown},
		{"AbsentStillFails", forkengine.ReconcileAbsent, forkengine.StatusFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, withPoisonedStore)
			h.seed(1)
			op := h.unknownFork("r")
			h.driver.QueueReconcile(forkenginetest.ReconcileStep{Result: forkengine.ReconcileResult{Answer: tc.answer,
				Error: "the provider says " + poison}})
			got, err := h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.Status)
			require.Equal(t, "the provider's answer could not be recorded", got.Error)
			stored := h.stored(op.ID)
			require.Equal(t, 1, stored.ReconcileAttempts, "the attempt counts")
			if tc.want == forkengine.StatusUnknown {
				require.NotNil(t, stored.NextReconcileAt, "and the next one is scheduled")
				require.True(t, stored.NextReconcileAt.After(*stored.LastReconciledAt))
			} else {
				require.Equal(t, forkengine.ReasonReconciledAbsent, stored.ErrorReason)
			}
		})
	}
}
