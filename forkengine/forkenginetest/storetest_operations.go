package forkenginetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// fullOperation fills every field, JSON ones included, so a round trip checks them all.
func fullOperation(ws, id string) forkengine.ForkOperation {
	op := newOperation(ws, id, "src", "src-t2", "dst", forkengine.StatusCommitted)
	op.TargetTurnID = "dst-t2"
	op.Error = "none"
	op.TargetProviderSessionID = "p-dst"
	op.StateBindingMode = forkengine.BindingProviderOwned
	op.TargetTurnBindings = []forkengine.TurnBinding{
		{ProviderTurnID: "c1", Binding: json.RawMessage(`{"k":1}`)},
		{ProviderTurnID: "c2", Binding: json.RawMessage(`{"k":[2,{"n":null}]}`)},
	}
	op.Receipt = "receipt"
	src := newSession(ws, "src")
	t1, t2 := newTurn(ws, "src", "src-t1", 1), newTurn(ws, "src", "src-t2", 2)
	m1 := newMessage(ws, "src", "src-t1", "m1")
	m1.Position = 4
	op.Snapshot = forkengine.Snapshot{Version: 1, Session: src, Turns: []forkengine.Turn{t1, t2}, Messages: []forkengine.Message{m1}}
	op.SnapshotHash = "snap"
	op.DispatchedAt, op.AcceptedAt = timePtr(at(11)), timePtr(at(12))
	op.CompletedAt, op.AcknowledgedAt = timePtr(at(13)), timePtr(at(14))
	op.UpdatedAt = at(14)
	op.ErrorReason, op.ReconcileAttempts = "reason", 3
	op.LastReconciledAt, op.NextReconcileAt = timePtr(at(15)), timePtr(at(16))
	op.LeaseOwner, op.LeaseExpiresAt = "instance", timePtr(at(17))
	op.RequestedBy, op.AcknowledgedBy = "auth0|alice", "token:ci"
	return op
}

func operationTests() map[string]storeTest {
	return map[string]storeTest{
		"InsertRoundTripsEveryField": func(t *testing.T, s forkengine.Store) {
			op := fullOperation(wsA, "op1")
			insertOperations(t, s, op)
			got, err := s.GetOperation(context.Background(), wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, op, got)
		},
		"UpdateRecordsWhoAcknowledged": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			op := newOperation(wsA, "op1", "s1", "t1", "x1", forkengine.StatusCommitted)
			op.RequestedBy = "alice"
			insertOperations(t, s, op)
			next := op
			next.AcknowledgedAt, next.AcknowledgedBy, next.UpdatedAt = timePtr(at(30)), "bob", at(30)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				changed, err := tx.UpdateOperation(ctx, next, forkengine.StatusCommitted)
				require.True(t, changed)
				return err
			})
			got, err := s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, "alice", got.RequestedBy)
			require.Equal(t, "bob", got.AcknowledgedBy)
		},
		"GetMissingIsErrNotFound": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			_, err := s.GetOperation(ctx, wsA, "nope")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			_, err = s.GetOperationByRequestID(ctx, wsA, "nope")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			_, err = s.LatestOperationOnBoundary(ctx, wsA, "s", "t")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			_, err = s.OperationReservingTarget(ctx, wsA, "x")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"DuplicateIDIsErrDuplicate": func(t *testing.T, s forkengine.Store) {
			insertOperations(t, s, newOperation(wsA, "op1", "s1", "t1", "x1", forkengine.StatusFailed))
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				op := newOperation(wsA, "op1", "s2", "t2", "x2", forkengine.StatusFailed)
				op.RequestID = "fresh"
				return tx.InsertOperation(ctx, op)
			})
		},
		"RequestIDIsUniquePerWorkspace": func(t *testing.T, s forkengine.Store) {
			insertOperations(t, s, newOperation(wsA, "op1", "s1", "t1", "x1", forkengine.StatusFailed))
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				op := newOperation(wsA, "op2", "s2", "t2", "x2", forkengine.StatusFailed)
				op.RequestID = "req-op1"
				return tx.InsertOperation(ctx, op)
			})
			other := newOperation(wsB, "op2", "s2", "t2", "x2", forkengine.StatusFailed)
			other.RequestID = "req-op1"
			insertOperations(t, s, other)
		},
		"OneActiveOperationPerBoundary": func(t *testing.T, s forkengine.Store) {
			insertOperations(t, s,
				newOperation(wsA, "done", "s1", "t1", "x1", forkengine.StatusCommitted),
				newOperation(wsA, "failed", "s1", "t1", "x2", forkengine.StatusFailed),
				newOperation(wsA, "unknown", "s1", "t1", "x3", forkengine.StatusUnknown),
				newOperation(wsA, "active", "s1", "t1", "x4", forkengine.StatusDispatching),
				newOperation(wsA, "other-turn", "s1", "t2", "x5", forkengine.StatusPrepared),
				newOperation(wsB, "other-ws", "s1", "t1", "x6", forkengine.StatusPrepared),
			)
			for _, status := range []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching, forkengine.StatusProviderAccepted} {
				requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
					return tx.InsertOperation(ctx, newOperation(wsA, "second", "s1", "t1", "x9", status))
				})
			}
			// A terminal operation does not hold the boundary.
			insertOperations(t, s, newOperation(wsA, "second", "s1", "t1", "x9", forkengine.StatusFailed))
		},
		"OneNonFailedReservationPerTarget": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			insertOperations(t, s,
				newOperation(wsA, "failed", "s1", "t1", "x1", forkengine.StatusFailed),
				newOperation(wsA, "failed-too", "s1", "t2", "x1", forkengine.StatusFailed),
			)
			_, err := s.OperationReservingTarget(ctx, wsA, "x1")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "failed operations release the target")
			insertOperations(t, s, newOperation(wsA, "holder", "s1", "t3", "x1", forkengine.StatusCommitted))
			for _, status := range []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusCommitted, forkengine.StatusUnknown} {
				requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
					return tx.InsertOperation(ctx, newOperation(wsA, "second", "s2", "t1", "x1", status))
				})
			}
			got, err := s.OperationReservingTarget(ctx, wsA, "x1")
			require.NoError(t, err)
			require.Equal(t, "holder", got.ID)
		},
		"UpdateSwapsOnlyFromExpectedStatus": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			op := newOperation(wsA, "op1", "s1", "t1", "x1", forkengine.StatusPrepared)
			insertOperations(t, s, op)
			next := fullOperation(wsA, "op1")
			next.Status = forkengine.StatusDispatching
			next.LeaseOwner, next.LeaseExpiresAt = op.LeaseOwner, op.LeaseExpiresAt // the swap is on the owner too
			var changed bool
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				changed, err = tx.UpdateOperation(ctx, next, forkengine.StatusDispatching)
				return err
			})
			require.False(t, changed, "wrong expected status")
			got, err := s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, op, got, "nothing written")

			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				changed, err = tx.UpdateOperation(ctx, next, forkengine.StatusPrepared)
				return err
			})
			require.True(t, changed)
			got, err = s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			want := next
			want.Snapshot, want.SnapshotHash = op.Snapshot, op.SnapshotHash
			require.NotEqual(t, want.SnapshotHash, next.SnapshotHash, "the test must try to change the snapshot")
			require.Equal(t, want, got, "every field replaced but the snapshot and its hash, fixed at insert")
		},
		"ReplaceSnapshotKeepsItsHash": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			op := fullOperation(wsA, "op1")
			insertOperations(t, s, op, fullOperation(wsB, "op1"))
			_, err := s.GetOperation(ctx, wsA, "op1") // a read before, so a cached snapshot must not answer after
			require.NoError(t, err)
			trimmed := op
			trimmed.Snapshot = forkengine.Snapshot{Version: op.Snapshot.Version, Session: op.Snapshot.Session}
			trimmed.Status, trimmed.Receipt = forkengine.StatusFailed, "ignored"
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.ReplaceSnapshot(ctx, trimmed) })
			got, err := s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			want := op
			want.Snapshot = trimmed.Snapshot
			require.Equal(t, want, got, "only the snapshot changed; its hash is the one stored")
			other, err := s.GetOperation(ctx, wsB, "op1")
			require.NoError(t, err)
			require.Equal(t, fullOperation(wsB, "op1"), other, "the other workspace's operation is untouched")

			next := got
			next.Status, next.UpdatedAt = forkengine.StatusCommitted, at(20)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				_, err := tx.UpdateOperation(ctx, next, forkengine.StatusCommitted)
				return err
			})
			got, err = s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, trimmed.Snapshot, got.Snapshot, "an update keeps the replaced snapshot")

			err = s.Update(ctx, func(tx forkengine.Tx) error {
				return tx.ReplaceSnapshot(ctx, newOperation(wsA, "nope", "s", "t", "x", forkengine.StatusCommitted))
			})
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"ReplaceSnapshotRolledBackKeepsTheFrozenOne": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			op := fullOperation(wsA, "op1")
			insertOperations(t, s, op)
			rollback := errors.New("roll back")
			err := s.Update(ctx, func(tx forkengine.Tx) error {
				trimmed := op
				trimmed.Snapshot = forkengine.Snapshot{Version: op.Snapshot.Version, Session: op.Snapshot.Session}
				if err := tx.ReplaceSnapshot(ctx, trimmed); err != nil {
					return err
				}
				return rollback
			})
			require.ErrorIs(t, err, rollback)
			got, err := s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, op, got)
		},
		"UpdateMissingReportsFalse": func(t *testing.T, s forkengine.Store) {
			var changed bool
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				changed, err = tx.UpdateOperation(ctx, newOperation(wsA, "nope", "s", "t", "x", forkengine.StatusFailed), forkengine.StatusPrepared)
				return err
			})
			require.False(t, changed)
		},
		"UpdateOntoHeldBoundaryIsErrDuplicate": func(t *testing.T, s forkengine.Store) {
			old := newOperation(wsA, "old", "s1", "t1", "x1", forkengine.StatusFailed)
			insertOperations(t, s, old, newOperation(wsA, "holder", "s1", "t1", "x2", forkengine.StatusPrepared))
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				revived := old
				revived.Status = forkengine.StatusPrepared
				_, err := tx.UpdateOperation(ctx, revived, forkengine.StatusFailed)
				return err
			})
		},
	}
}
