package forkenginetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// seedForkFamily stores source "src" (turns src-t1, src-t2 with a message each), its committed
// fork "dst" (with a turn, a message and the lineage), a fork "grand" of dst, and an unrelated
// session "other" with a turn and message.
func seedForkFamily(t *testing.T, s forkengine.Store, ws string) {
	t.Helper()
	seedSessionWithTurns(t, s, ws, "src", 2)
	seedSessionWithTurns(t, s, ws, "dst", 1)
	seedSessionWithTurns(t, s, ws, "grand", 1)
	seedSessionWithTurns(t, s, ws, "other", 1)
	insertOperations(t, s,
		newOperation(ws, "fork-dst", "src", "src-t2", "dst", forkengine.StatusCommitted),
		newOperation(ws, "fork-grand", "dst", "dst-t1", "grand", forkengine.StatusCommitted),
		newOperation(ws, "fork-other", "other", "other-t1", "other-child", forkengine.StatusPrepared),
	)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		msgs := []forkengine.Message{
			newMessage(ws, "src", "src-t1", "src-m1"), newMessage(ws, "src", "src-t2", "src-m2"),
			newMessage(ws, "dst", "dst-t1", "dst-m1"), newMessage(ws, "other", "other-t1", "other-m1"),
		}
		if _, err := tx.InsertMessages(ctx, msgs); err != nil {
			return err
		}
		if err := tx.InsertLineage(ctx, newLineage(ws, "fork-dst", "src", "src-t2", "dst", at(5))); err != nil {
			return err
		}
		return tx.InsertLineage(ctx, newLineage(ws, "fork-grand", "dst", "dst-t1", "grand", at(6)))
	})
}

func purgeTests() map[string]storeTest {
	return map[string]storeTest{
		"RemovesSessionRowsOperationsAndLineages": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedForkFamily(t, s, wsA)
			seedForkFamily(t, s, wsB)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, wsA, "dst") })

			_, err := s.GetSession(ctx, wsA, "dst")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			_, err = s.GetTurn(ctx, wsA, "dst-t1")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			msgs, err := s.MessagesByIDs(ctx, wsA, []string{"dst-m1", "src-m1", "src-m2", "other-m1"})
			require.NoError(t, err)
			require.ElementsMatch(t, []string{"src-m1", "src-m2", "other-m1"}, keys(msgs))
			ops, err := s.OperationsByIDs(ctx, wsA, []string{"fork-dst", "fork-grand", "fork-other"})
			require.NoError(t, err)
			require.ElementsMatch(t, []string{"fork-other"}, keys(ops), "operations where dst is source or target are gone")
			lineages, err := s.LineagesByTargetIDs(ctx, wsA, []string{"dst", "grand"})
			require.NoError(t, err)
			require.Empty(t, lineages, "lineages where dst is source or target are gone")

			survivors, err := s.SessionsByIDs(ctx, wsA, []string{"src", "grand", "other"})
			require.NoError(t, err)
			require.Len(t, survivors, 3, "other sessions stay")
			turns, err := s.TurnsBySessionIDs(ctx, wsA, []string{"src", "grand"}, 0, 0)
			require.NoError(t, err)
			require.Len(t, turns["src"], 2)
			require.Len(t, turns["grand"], 1)

			untouched, err := s.OperationsByIDs(ctx, wsB, []string{"fork-dst", "fork-grand"})
			require.NoError(t, err)
			require.Len(t, untouched, 2, "the other workspace keeps its rows")
			_, err = s.GetSession(ctx, wsB, "dst")
			require.NoError(t, err)
		},
		"MissingSessionStillReleasesItsOperations": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedForkFamily(t, s, wsA)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, wsA, "other-child") })
			_, err := s.GetOperation(ctx, wsA, "fork-other")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
			_, err = s.OperationReservingTarget(ctx, wsA, "other-child")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
