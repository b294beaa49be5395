package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// testOperationClassesFollowStatus walks operations through every kind of status change the
// store writes (the state compare-and-swap with and without a class change, and the rewrite of
// an identity column) and checks after each that the derived columns are those of the status:
// a status change that left them out while its class changed would leave the row in the wrong
// partial indexes.
func testOperationClassesFollowStatus(t *testing.T, cfg Config) {
	ctx := context.Background()
	db := openTest(t, cfg)
	check := func(id string) {
		t.Helper()
		var got struct {
			Status      string
			Activity    int64
			HoldsTarget *int64
		}
		require.NoError(t, db.gorm.Raw("SELECT status, activity, holds_target FROM fork_operations WHERE workspace_id = 'ws' AND id = ?", id).
			Scan(&got).Error)
		status := forkengine.OperationStatus(got.Status)
		require.Equal(t, activityOf(status), got.Activity, "%s in %s", id, status)
		require.Equal(t, holdsTargetOf(status), got.HoldsTarget, "%s in %s", id, status)
	}
	paths := map[string][]forkengine.OperationStatus{
		"commit":    {forkengine.StatusDispatching, forkengine.StatusProviderAccepted, forkengine.StatusCommitted, forkengine.StatusCommitted},
		"fail":      {forkengine.StatusDispatching, forkengine.StatusFailed},
		"reconcile": {forkengine.StatusDispatching, forkengine.StatusUnknown, forkengine.StatusProviderAccepted, forkengine.StatusUnknown, forkengine.StatusFailed},
	}
	for id, path := range paths {
		op := forkengine.ForkOperation{WorkspaceID: "ws", ID: id, RequestID: "req-" + id, SourceSessionID: "src-" + id,
			ThroughTurnID: "turn", TargetSessionID: "dst-" + id, Status: forkengine.StatusPrepared, SnapshotHash: "h",
			Snapshot: forkengine.Snapshot{Version: 1, Turns: []forkengine.Turn{{ID: "turn"}}}, CreatedAt: at(1), UpdatedAt: at(1)}
		require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error { return tx.InsertOperation(ctx, op) }))
		check(id)
		for _, next := range path {
			from := op.Status
			op.Status = next
			require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
				changed, err := tx.UpdateOperation(ctx, op, from)
				require.True(t, changed, "%s: %s -> %s", id, from, next)
				return err
			}))
			check(id)
		}
	}

	// A change of identity takes the rewrite, which writes the columns too.
	op, err := db.GetOperation(ctx, "ws", "fail")
	require.NoError(t, err)
	op.SourceSessionID, op.Status = "elsewhere", forkengine.StatusPrepared
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		changed, err := tx.UpdateOperation(ctx, op, forkengine.StatusFailed)
		require.True(t, changed)
		return err
	}))
	check("fail")
	recoverable, err := db.RecoverableOperations(ctx, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	require.Len(t, recoverable, 1)
	require.Equal(t, "fail", recoverable[0].ID, "the rewritten row is back in the active indexes")
}

// testTargetReservation: failed operations of one target never collide in the unique index
// (their holds_target is NULL); a second reserving one does, and every one of them is found by
// target.
func testTargetReservation(t *testing.T, cfg Config) {
	ctx := context.Background()
	db := openTest(t, cfg)
	insert := func(id string, status forkengine.OperationStatus) error {
		op := forkengine.ForkOperation{WorkspaceID: "ws", ID: id, RequestID: "req-" + id, SourceSessionID: "src",
			ThroughTurnID: "turn-" + id, TargetSessionID: "dst", Status: status, SnapshotHash: "h",
			Snapshot: forkengine.Snapshot{Version: 1, Turns: []forkengine.Turn{{ID: "turn-" + id}}}, CreatedAt: at(1), UpdatedAt: at(1)}
		return db.Update(ctx, func(tx forkengine.Tx) error { return tx.InsertOperation(ctx, op) })
	}
	require.NoError(t, insert("failed-1", forkengine.StatusFailed))
	require.NoError(t, insert("failed-2", forkengine.StatusFailed))
	require.NoError(t, insert("holder", forkengine.StatusCommitted))
	require.ErrorIs(t, insert("second", forkengine.StatusPrepared), forkengine.ErrDuplicate)
	holder, err := db.OperationReservingTarget(ctx, "ws", "dst")
	require.NoError(t, err)
	require.Equal(t, "holder", holder.ID)
	all, err := db.ListOperations(ctx, "ws", forkengine.OperationFilter{TargetSessionID: "dst"}, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	require.Len(t, all, 3)
}

func TestTargetReservationSQLite(t *testing.T) {
	t.Parallel()
	testTargetReservation(t, sqliteConfig(t))
}

func TestTargetReservationPostgres(t *testing.T) {
	requirePostgres(t)
	testTargetReservation(t, postgresConfig(t))
}

func TestOperationClassesFollowStatusSQLite(t *testing.T) {
	t.Parallel()
	testOperationClassesFollowStatus(t, sqliteConfig(t))
}

func TestOperationClassesFollowStatusPostgres(t *testing.T) {
	requirePostgres(t)
	testOperationClassesFollowStatus(t, postgresConfig(t))
}
