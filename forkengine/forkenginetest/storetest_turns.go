package forkenginetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func turnTests() map[string]storeTest {
	return map[string]storeTest{
		"UpsertInsertsThenReplacesEveryField": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			turns := seedSessionWithTurns(t, s, wsA, "s1", 1)
			got, err := s.GetTurn(ctx, wsA, turns[0].ID)
			require.NoError(t, err)
			require.Equal(t, turns[0], got)

			changed := forkengine.Turn{
				WorkspaceID: wsA, SessionID: "s1", ID: turns[0].ID, Sequence: 7,
				Phase: forkengine.PhaseRunning, Origin: "api", StartedAt: at(20), UpdatedAt: at(21),
				ProviderTurnID: "other", ProviderTurnBinding: json.RawMessage(`{"x":"y"}`),
			}
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertTurn(ctx, changed) })
			got, err = s.GetTurn(ctx, wsA, turns[0].ID)
			require.NoError(t, err)
			require.Equal(t, changed, got)
		},
		"UpsertWithoutSessionIsErrNotFound": func(t *testing.T, s forkengine.Store) {
			err := s.Update(context.Background(), func(tx forkengine.Tx) error {
				return tx.UpsertTurn(context.Background(), newTurn(wsA, "nope", "t1", 1))
			})
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"InsertTurnsWritesTheBatch": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedSessionWithTurns(t, s, wsA, "s1", 0)
			batch := []forkengine.Turn{newTurn(wsA, "s1", "b1", 1), newTurn(wsA, "s1", "b2", 2)}
			batch[1].ProviderTurnBinding = json.RawMessage(`{"k":[1,2]}`)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.InsertTurns(ctx, batch) })
			got, err := s.TurnsThrough(ctx, wsA, "s1", 10)
			require.NoError(t, err)
			require.Equal(t, batch, got)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.InsertTurns(ctx, nil) })
		},
		"InsertTurnsRefusesTheWholeBatch": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedSessionWithTurns(t, s, wsA, "s1", 1)
			for name, batch := range map[string][]forkengine.Turn{
				"taken id":       {newTurn(wsA, "s1", "fresh", 5), newTurn(wsA, "s1", "s1-t1", 6)},
				"taken sequence": {newTurn(wsA, "s1", "fresh", 5), newTurn(wsA, "s1", "other", 1)},
				"sequence twice": {newTurn(wsA, "s1", "fresh", 5), newTurn(wsA, "s1", "other", 5)},
				"id twice":       {newTurn(wsA, "s1", "fresh", 5), newTurn(wsA, "s1", "fresh", 6)},
			} {
				requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.InsertTurns(ctx, batch) })
				_, err := s.GetTurn(ctx, wsA, "fresh")
				require.ErrorIs(t, err, forkengine.ErrNotFound, "%s: nothing of the batch is kept", name)
			}
			err := s.Update(ctx, func(tx forkengine.Tx) error {
				return tx.InsertTurns(ctx, []forkengine.Turn{newTurn(wsA, "nope", "t9", 1)})
			})
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"SequenceIsUniquePerSession": func(t *testing.T, s forkengine.Store) {
			seedSessionWithTurns(t, s, wsA, "s1", 1)
			seedSessionWithTurns(t, s, wsA, "s2", 1) // the same sequence in another session is fine
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.UpsertTurn(ctx, newTurn(wsA, "s1", "another", 1))
			})
		},
		"UpsertNeverMovesATurnToAnotherSession": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			turns := seedSessionWithTurns(t, s, wsA, "s1", 1)
			seedSessionWithTurns(t, s, wsA, "s2", 0)
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.UpsertTurn(ctx, newTurn(wsA, "s2", turns[0].ID, 1))
			})
			got, err := s.GetTurn(ctx, wsA, turns[0].ID)
			require.NoError(t, err)
			require.Equal(t, turns[0], got, "the turn stays as it was")
			counts, err := s.CountTurnsBySessionIDs(ctx, wsA, []string{"s1", "s2"})
			require.NoError(t, err)
			require.Equal(t, map[string]int{"s1": 1}, counts)
		},
		"GetMissingIsErrNotFound": func(t *testing.T, s forkengine.Store) {
			_, err := s.GetTurn(context.Background(), wsA, "nope")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"TurnsByIDsOmitsMissing": func(t *testing.T, s forkengine.Store) {
			turns := seedSessionWithTurns(t, s, wsA, "s1", 3)
			got, err := s.TurnsByIDs(context.Background(), wsA, []string{turns[0].ID, turns[2].ID, "nope"})
			require.NoError(t, err)
			require.Equal(t, map[string]forkengine.Turn{turns[0].ID: turns[0], turns[2].ID: turns[2]}, got)
		},
		"TurnsBySessionIDsPagesEachSession": testTurnsBySession,
		"CountTurnsBySessionIDs": func(t *testing.T, s forkengine.Store) {
			seedSessionWithTurns(t, s, wsA, "s1", 3)
			seedSessionWithTurns(t, s, wsA, "s2", 1)
			seedSessionWithTurns(t, s, wsA, "empty", 0)
			got, err := s.CountTurnsBySessionIDs(context.Background(), wsA, []string{"s1", "s2", "empty", "nope"})
			require.NoError(t, err)
			require.Equal(t, 3, got["s1"])
			require.Equal(t, 1, got["s2"])
			require.Zero(t, got["empty"])
			require.Zero(t, got["nope"])
		},
		"LatestAndActiveTurnPerSession": testLatestAndActiveTurns,
		"TurnsThroughStopsAtSequence": func(t *testing.T, s forkengine.Store) {
			turns := seedSessionWithTurns(t, s, wsA, "s1", 4)
			seedSessionWithTurns(t, s, wsA, "s2", 4)
			got, err := s.TurnsThrough(context.Background(), wsA, "s1", 3)
			require.NoError(t, err)
			require.Equal(t, turns[:3], got)
			got, err = s.TurnsThrough(context.Background(), wsA, "s1", 0)
			require.NoError(t, err)
			require.Empty(t, got)
		},
	}
}

// seedTurnPages writes the sessions the turn paging tests read, in workspace A: s1 with five
// turns, s2 with two, one without any, and a session s1 in workspace B that no read of A sees.
// It returns the turns of s1 and s2 and the ids the tests ask for, one of them missing.
func seedTurnPages(t *testing.T, s forkengine.Store) (s1, s2 []forkengine.Turn, sessions []string) {
	t.Helper()
	s1 = seedSessionWithTurns(t, s, wsA, "s1", 5)
	s2 = seedSessionWithTurns(t, s, wsA, "s2", 2)
	seedSessionWithTurns(t, s, wsA, "empty", 0)
	seedSessionWithTurns(t, s, wsB, "s1", 5)
	return s1, s2, []string{"s1", "s2", "empty", "nope"}
}

func testTurnsBySession(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	s1, s2, sessions := seedTurnPages(t, s)

	all, err := s.TurnsBySessionIDs(ctx, wsA, sessions, 0, 0)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": s1, "s2": s2}, all)

	page, err := s.TurnsBySessionIDs(ctx, wsA, sessions, 1, 2)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": s1[1:3], "s2": s2[1:2]}, page)

	rest, err := s.TurnsBySessionIDs(ctx, wsA, sessions, 3, 10)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": s1[3:]}, rest)

	// A page exactly as long as what is left, a page of one, and a cursor past the end.
	exact, err := s.TurnsBySessionIDs(ctx, wsA, sessions, 0, 5)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": s1, "s2": s2}, exact)
	one, err := s.TurnsBySessionIDs(ctx, wsA, sessions, 4, 1)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": s1[4:5]}, one)
	past, err := s.TurnsBySessionIDs(ctx, wsA, sessions, 5, 3)
	require.NoError(t, err)
	require.Empty(t, past)
}

func testLatestAndActiveTurns(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	s1 := seedSessionWithTurns(t, s, wsA, "s1", 3) // all settled
	s2 := seedSessionWithTurns(t, s, wsA, "s2", 4)
	seedSessionWithTurns(t, s, wsA, "empty", 0)
	// s2: turn 2 running, turn 3 waiting, turn 4 settled: the active one is the highest unsettled.
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		for i, phase := range map[int]forkengine.TurnPhase{1: forkengine.PhaseRunning, 2: forkengine.PhaseWaiting} {
			s2[i].Phase, s2[i].Outcome, s2[i].SettledAt = phase, "", nil
			if err := tx.UpsertTurn(ctx, s2[i]); err != nil {
				return err
			}
		}
		return nil
	})
	sessions := []string{"s1", "s2", "empty", "nope"}
	latest, err := s.LatestTurnsBySessionIDs(ctx, wsA, sessions)
	require.NoError(t, err)
	require.Equal(t, map[string]forkengine.Turn{"s1": s1[2], "s2": s2[3]}, latest)
	active, err := s.ActiveTurnsBySessionIDs(ctx, wsA, sessions)
	require.NoError(t, err)
	require.Equal(t, map[string]forkengine.Turn{"s2": s2[2]}, active)
}

func messageTests() map[string]storeTest {
	return map[string]storeTest{
		"InsertAssignsIncreasingPositionsInSliceOrder": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			turns := seedSessionWithTurns(t, s, wsA, "s1", 2)
			var first, second []forkengine.Message
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				first, err = tx.InsertMessages(ctx, []forkengine.Message{
					newMessage(wsA, "s1", turns[1].ID, "z"), newMessage(wsA, "s1", turns[0].ID, "a"),
				})
				return err
			})
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				second, err = tx.InsertMessages(ctx, []forkengine.Message{newMessage(wsA, "s1", turns[1].ID, "m")})
				return err
			})
			require.Equal(t, []string{"z", "a"}, ids(first, messageID))
			require.Less(t, first[0].Position, first[1].Position)
			require.Less(t, first[1].Position, second[0].Position)

			byTurn, err := s.MessagesByTurnIDs(ctx, wsA, []string{turns[0].ID, turns[1].ID, "nope"})
			require.NoError(t, err)
			require.Equal(t, map[string][]forkengine.Message{
				turns[0].ID: {first[1]}, turns[1].ID: {first[0], second[0]},
			}, byTurn)
			byID, err := s.MessagesByIDs(ctx, wsA, []string{"a", "m", "nope"})
			require.NoError(t, err)
			require.Equal(t, map[string]forkengine.Message{"a": first[1], "m": second[0]}, byID)
		},
		"DuplicateIDIsErrDuplicateAndInsertsNothing": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			turns := seedSessionWithTurns(t, s, wsA, "s1", 1)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				_, err := tx.InsertMessages(ctx, []forkengine.Message{newMessage(wsA, "s1", turns[0].ID, "m1")})
				return err
			})
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				_, err := tx.InsertMessages(ctx, []forkengine.Message{
					newMessage(wsA, "s1", turns[0].ID, "m2"), newMessage(wsA, "s1", turns[0].ID, "m1"),
				})
				return err
			})
			requireDuplicate(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				_, err := tx.InsertMessages(ctx, []forkengine.Message{
					newMessage(wsA, "s1", turns[0].ID, "m3"), newMessage(wsA, "s1", turns[0].ID, "m3"),
				})
				return err
			})
			got, err := s.MessagesByTurnIDs(ctx, wsA, []string{turns[0].ID})
			require.NoError(t, err)
			require.Equal(t, []string{"m1"}, ids(got[turns[0].ID], messageID))
		},
		"InsertWithoutTurnIsErrNotFound": func(t *testing.T, s forkengine.Store) {
			seedSessionWithTurns(t, s, wsA, "s1", 0)
			err := s.Update(context.Background(), func(tx forkengine.Tx) error {
				_, err := tx.InsertMessages(context.Background(), []forkengine.Message{newMessage(wsA, "s1", "nope", "m1")})
				return err
			})
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
	}
}
