package forkenginetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// commitFork stores a committed operation and its lineage in one transaction, as a fork's commit does.
func commitFork(t *testing.T, s forkengine.Store, ws, id, source, target string) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if err := tx.InsertOperation(ctx, newOperation(ws, id, source, source+"-t1", target, forkengine.StatusCommitted)); err != nil {
			return err
		}
		return tx.InsertLineage(ctx, newLineage(ws, id, source, source+"-t1", target, at(1)))
	})
}

// moveOperation moves a stored operation from one status to another, failing the test otherwise.
func moveOperation(t *testing.T, s forkengine.Store, ws, id string, from, to forkengine.OperationStatus) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		op, err := tx.GetOperation(ctx, ws, id)
		if err != nil {
			return err
		}
		op.Status = to
		changed, err := tx.UpdateOperation(ctx, op, from)
		require.True(t, changed, "%s moves from %s to %s", id, from, to)
		return err
	})
}

// requireFamilyCounts checks CountFamilyForks for each session of want.
func requireFamilyCounts(t *testing.T, s forkengine.Store, ws string, want map[string]int, why string) {
	t.Helper()
	for root, n := range want {
		got, err := s.CountFamilyForks(context.Background(), ws, root)
		require.NoError(t, err)
		require.Equal(t, n, got, "family of %s: %s", root, why)
	}
}

func familyCountTests() map[string]storeTest {
	return map[string]storeTest{
		// A store may keep the count instead of walking the family; it must stay what a walk gives
		// through every write that changes a family: inserts, failures, lineages and purges.
		"CountFamilyForksFollowsFailuresLineagesAndPurges": func(t *testing.T, s forkengine.Store) {
			commitFork(t, s, wsB, "to-a", "root", "a")
			commitFork(t, s, wsA, "to-a", "root", "a")
			insertOperations(t, s, newOperation(wsA, "to-b", "a", "a-t1", "b", forkengine.StatusPrepared),
				newOperation(wsA, "to-p", "root", "root-t2", "p", forkengine.StatusPrepared))
			requireFamilyCounts(t, s, wsA, map[string]int{"root": 3, "a": 1}, "one committed, two prepared")

			moveOperation(t, s, wsA, "to-p", forkengine.StatusPrepared, forkengine.StatusFailed)
			requireFamilyCounts(t, s, wsA, map[string]int{"root": 2}, "a failed fork stops counting")

			moveOperation(t, s, wsA, "to-b", forkengine.StatusPrepared, forkengine.StatusDispatching)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				op, err := tx.GetOperation(ctx, wsA, "to-b")
				if err != nil {
					return err
				}
				op.Status = forkengine.StatusCommitted
				if _, err := tx.UpdateOperation(ctx, op, forkengine.StatusDispatching); err != nil {
					return err
				}
				return tx.InsertLineage(ctx, newLineage(wsA, "to-b", "a", "a-t1", "b", at(2)))
			})
			commitFork(t, s, wsA, "to-c", "b", "c")
			insertOperations(t, s, newOperation(wsA, "to-u", "c", "c-t1", "u", forkengine.StatusUnknown))
			requireFamilyCounts(t, s, wsA, map[string]int{"root": 4, "a": 3, "b": 2}, "forks of forks count in the root's family")

			// x is a family of its own until a lineage hangs it under root.
			commitFork(t, s, wsA, "to-y", "x", "y")
			insertOperations(t, s, newOperation(wsA, "to-z", "y", "y-t1", "z", forkengine.StatusPrepared))
			requireFamilyCounts(t, s, wsA, map[string]int{"x": 2, "root": 4}, "a separate family")
			commitFork(t, s, wsA, "to-x", "root", "x")
			requireFamilyCounts(t, s, wsA, map[string]int{"root": 7, "x": 2}, "x's forks join root's family")

			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, wsA, "a") })
			requireFamilyCounts(t, s, wsA, map[string]int{"root": 3, "b": 2, "a": 0},
				"purging a removes its forks and the fork that made it; b heads a family of its own")

			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, wsA, "root") })
			requireFamilyCounts(t, s, wsA, map[string]int{"root": 0, "x": 2, "b": 2}, "purging a root leaves its children as roots")
			requireFamilyCounts(t, s, wsB, map[string]int{"root": 1, "x": 0}, "the other workspace is untouched")
		},
	}
}
