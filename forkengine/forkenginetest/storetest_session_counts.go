package forkenginetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// countShapes are the filters a store may answer from maintained counts: every combination of
// visibility, deletion and roots-only, and one with a kind so the counting path is covered too.
func countShapes() []forkengine.SessionFilter {
	yes, no := true, false
	var out []forkengine.SessionFilter
	for _, visible := range []*bool{nil, &yes, &no} {
		for _, deleted := range []bool{false, true} {
			for _, roots := range []bool{false, true} {
				out = append(out, forkengine.SessionFilter{Visible: visible, IncludeDeleted: deleted, RootsOnly: roots})
			}
		}
	}
	return append(out, forkengine.SessionFilter{Kind: forkengine.SessionRoot, RootsOnly: true})
}

// requireCountsMatchLists checks that CountSessions agrees with the rows ListSessions returns,
// for every filter shape, in both workspaces.
func requireCountsMatchLists(t *testing.T, r forkengine.Reader, step string) {
	t.Helper()
	ctx := context.Background()
	for _, ws := range []string{wsA, wsB} {
		for _, f := range countShapes() {
			name := fmt.Sprintf("after %s, %s %+v", step, ws, f)
			rows, err := r.ListSessions(ctx, ws, f, forkengine.PageCursor{}, 0)
			require.NoError(t, err, name)
			n, err := r.CountSessions(ctx, ws, f)
			require.NoError(t, err, name)
			require.Equal(t, len(rows), n, name)
		}
	}
}

func sessionCountTests() map[string]storeTest {
	return map[string]storeTest{
		"CountsFollowEveryWrite":        testCountsFollowEveryWrite,
		"CountsSeeTheirOwnTransaction":  testCountsInTransaction,
		"RolledBackWritesAreNotCounted": testCountsAfterRollback,
	}
}

func testCountsFollowEveryWrite(t *testing.T, s forkengine.Store) {
	steps := []struct {
		name string
		fn   func(ctx context.Context, tx forkengine.Tx) error
	}{
		{"inserts", func(ctx context.Context, tx forkengine.Tx) error {
			for _, id := range []string{"root", "fork", "grandchild", "other"} {
				if err := tx.UpsertSession(ctx, newSession(wsA, id)); err != nil {
					return err
				}
			}
			return tx.UpsertSession(ctx, newSession(wsB, "root"))
		}},
		{"lineages", func(ctx context.Context, tx forkengine.Tx) error {
			if err := tx.InsertLineage(ctx, newLineage(wsA, "op1", "root", "t1", "fork", at(3))); err != nil {
				return err
			}
			return tx.InsertLineage(ctx, newLineage(wsA, "op2", "fork", "t1", "grandchild", at(4)))
		}},
		{"a lineage before its target exists", func(ctx context.Context, tx forkengine.Tx) error {
			if err := tx.InsertLineage(ctx, newLineage(wsA, "op3", "root", "t1", "late", at(5))); err != nil {
				return err
			}
			return tx.UpsertSession(ctx, newSession(wsA, "late"))
		}},
		{"hiding and re-upserting unchanged", func(ctx context.Context, tx forkengine.Tx) error {
			hidden := newSession(wsA, "fork")
			hidden.Visible = false
			if err := tx.UpsertSession(ctx, hidden); err != nil {
				return err
			}
			retitled := newSession(wsA, "other")
			retitled.Title = "renamed"
			return tx.UpsertSession(ctx, retitled)
		}},
		{"a soft delete", func(ctx context.Context, tx forkengine.Tx) error {
			return tx.SoftDeleteSession(ctx, wsA, "grandchild", at(8))
		}},
		{"an upsert that undeletes and hides", func(ctx context.Context, tx forkengine.Tx) error {
			back := newSession(wsA, "grandchild")
			back.Visible = false
			return tx.UpsertSession(ctx, back)
		}},
		{"a purge of a source, whose forks become roots", func(ctx context.Context, tx forkengine.Tx) error {
			return tx.PurgeSession(ctx, wsA, "root")
		}},
		{"a purge of a fork", func(ctx context.Context, tx forkengine.Tx) error {
			return tx.PurgeSession(ctx, wsA, "grandchild")
		}},
	}
	requireCountsMatchLists(t, s, "nothing")
	for _, step := range steps {
		update(t, s, step.fn)
		requireCountsMatchLists(t, s, step.name)
	}
}

func testCountsInTransaction(t *testing.T, s forkengine.Store) {
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, newSession(wsA, "a")); err != nil {
			return err
		}
		if err := tx.UpsertSession(ctx, newSession(wsA, "b")); err != nil {
			return err
		}
		if err := tx.InsertLineage(ctx, newLineage(wsA, "op1", "a", "t1", "b", at(3))); err != nil {
			return err
		}
		requireCountsMatchLists(t, tx, "writes in the same transaction")
		n, err := tx.CountSessions(ctx, wsA, forkengine.SessionFilter{RootsOnly: true})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return nil
	})
}

func testCountsAfterRollback(t *testing.T, s forkengine.Store) {
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		return tx.UpsertSession(ctx, newSession(wsA, "kept"))
	})
	ctx := context.Background()
	rollback := errors.New("roll back")
	err := s.Update(ctx, func(tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, newSession(wsA, "dropped")); err != nil {
			return err
		}
		if err := tx.SoftDeleteSession(ctx, wsA, "kept", at(9)); err != nil {
			return err
		}
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	requireCountsMatchLists(t, s, "a rolled-back transaction")
	n, err := s.CountSessions(ctx, wsA, forkengine.SessionFilter{})
	require.NoError(t, err)
	require.Equal(t, 1, n)
}
