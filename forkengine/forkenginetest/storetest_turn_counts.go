package forkenginetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// turnCountSessions are the sessions the turn count tests write, in both workspaces.
var turnCountSessions = []string{"ingested", "copied", "purged", "empty", "never"}

// requireTurnCountsMatchLists checks that CountTurnsBySessionIDs agrees with the turns
// TurnsBySessionIDs returns, for every session of both workspaces (absent when it has none).
func requireTurnCountsMatchLists(t *testing.T, r forkengine.Reader, step string) {
	t.Helper()
	ctx := context.Background()
	for _, ws := range []string{wsA, wsB} {
		lists, err := r.TurnsBySessionIDs(ctx, ws, turnCountSessions, 0, 0)
		require.NoError(t, err, step)
		want := map[string]int{}
		for id, turns := range lists {
			want[id] = len(turns)
		}
		got, err := r.CountTurnsBySessionIDs(ctx, ws, turnCountSessions)
		require.NoError(t, err, step)
		require.Equal(t, want, got, "after %s, %s", step, ws)
	}
}

func turnCountTests() map[string]storeTest {
	return map[string]storeTest{
		"CountsFollowEveryWrite":       testTurnCountsFollowEveryWrite,
		"CountsSeeTheirOwnTransaction": testTurnCountsInTransaction,
		"RolledBackTurnsAreNotCounted": testTurnCountsAfterRollback,
	}
}

// copiedTurns are n turns of session id as a fork's commit writes them: one InsertTurns.
func copiedTurns(ws, id string, n int) []forkengine.Turn {
	turns := make([]forkengine.Turn, n)
	for i := range turns {
		turns[i] = newTurn(ws, id, fmt.Sprintf("%s-copy-%d", id, i+1), int64(i+1))
	}
	return turns
}

func testTurnCountsFollowEveryWrite(t *testing.T, s forkengine.Store) {
	steps := []struct {
		name string
		fn   func(ctx context.Context, tx forkengine.Tx) error
	}{
		{"sessions", func(ctx context.Context, tx forkengine.Tx) error {
			for _, ws := range []string{wsA, wsB} {
				for _, id := range turnCountSessions[:4] {
					if err := tx.UpsertSession(ctx, newSession(ws, id)); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"ingested turns", func(ctx context.Context, tx forkengine.Tx) error {
			for i := 1; i <= 3; i++ {
				if err := tx.UpsertTurn(ctx, newTurn(wsA, "ingested", fmt.Sprintf("in-%d", i), int64(i))); err != nil {
					return err
				}
			}
			return tx.UpsertTurn(ctx, newTurn(wsB, "ingested", "in-1", 1))
		}},
		{"re-reported turns (updates, not new turns)", func(ctx context.Context, tx forkengine.Tx) error {
			for i := 1; i <= 3; i++ {
				turn := newTurn(wsA, "ingested", fmt.Sprintf("in-%d", i), int64(i))
				turn.Origin = "retried"
				if err := tx.UpsertTurn(ctx, turn); err != nil {
					return err
				}
			}
			return nil
		}},
		{"a fork's copied turns", func(ctx context.Context, tx forkengine.Tx) error {
			if err := tx.InsertTurns(ctx, copiedTurns(wsA, "copied", 20)); err != nil {
				return err
			}
			return tx.InsertTurns(ctx, append(copiedTurns(wsA, "purged", 4), copiedTurns(wsB, "purged", 2)...))
		}},
		{"a soft delete (turns stay)", func(ctx context.Context, tx forkengine.Tx) error {
			return tx.SoftDeleteSession(ctx, wsA, "copied", at(30))
		}},
		{"a purge", func(ctx context.Context, tx forkengine.Tx) error {
			return tx.PurgeSession(ctx, wsA, "purged")
		}},
		{"a purged session reported again", func(ctx context.Context, tx forkengine.Tx) error {
			if err := tx.UpsertSession(ctx, newSession(wsA, "purged")); err != nil {
				return err
			}
			return tx.UpsertTurn(ctx, newTurn(wsA, "purged", "again-1", 1))
		}},
	}
	requireTurnCountsMatchLists(t, s, "nothing")
	for _, step := range steps {
		update(t, s, step.fn)
		requireTurnCountsMatchLists(t, s, step.name)
	}
	got, err := s.CountTurnsBySessionIDs(context.Background(), wsA, turnCountSessions)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"ingested": 3, "copied": 20, "purged": 1}, got)
}

func testTurnCountsInTransaction(t *testing.T, s forkengine.Store) {
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, newSession(wsA, "copied")); err != nil {
			return err
		}
		if err := tx.InsertTurns(ctx, copiedTurns(wsA, "copied", 5)); err != nil {
			return err
		}
		requireTurnCountsMatchLists(t, tx, "writes in the same transaction")
		got, err := tx.CountTurnsBySessionIDs(ctx, wsA, []string{"copied"})
		require.NoError(t, err)
		require.Equal(t, map[string]int{"copied": 5}, got)
		return nil
	})
}

func testTurnCountsAfterRollback(t *testing.T, s forkengine.Store) {
	seedSessionWithTurns(t, s, wsA, "ingested", 2)
	ctx := context.Background()
	rollback := errors.New("roll back")
	err := s.Update(ctx, func(tx forkengine.Tx) error {
		if err := tx.UpsertTurn(ctx, newTurn(wsA, "ingested", "dropped", 3)); err != nil {
			return err
		}
		if err := tx.UpsertSession(ctx, newSession(wsA, "copied")); err != nil {
			return err
		}
		if err := tx.InsertTurns(ctx, copiedTurns(wsA, "copied", 3)); err != nil {
			return err
		}
		if err := tx.PurgeSession(ctx, wsA, "ingested"); err != nil {
			return err
		}
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	requireTurnCountsMatchLists(t, s, "a rolled-back transaction")
	got, err := s.CountTurnsBySessionIDs(ctx, wsA, turnCountSessions)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"ingested": 2}, got)
}
