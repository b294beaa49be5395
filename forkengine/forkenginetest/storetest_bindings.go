package forkenginetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// bindingTests: the two store reads and writes of the binding rules. ProviderTurnOwner finds
// the turn of a session a provider turn id is bound to; BindTurn writes a recovered binding by
// compare and swap on the binding it was read with.
func bindingTests() map[string]storeTest {
	return map[string]storeTest{
		"ProviderTurnOwnerFindsTheOtherTurn": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			turns := seedSessionWithTurns(t, s, wsA, "s1", 3) // provider turns pt-s1-t1..3
			seedSessionWithTurns(t, s, wsA, "s2", 1)
			legacy := turns[2]
			legacy.ProviderTurnID = legacy.ID // a copy of its own id: unbound
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertTurn(ctx, legacy) })

			owner, err := s.ProviderTurnOwner(ctx, wsA, "s1", "pt-s1-t1", "s1-t9")
			require.NoError(t, err)
			require.Equal(t, turns[0], owner)
			_, err = s.ProviderTurnOwner(ctx, wsA, "s1", "pt-s1-t1", "s1-t1")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "a turn does not own against itself")
			_, err = s.ProviderTurnOwner(ctx, wsA, "s2", "pt-s1-t1", "")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "ownership is per session")
			_, err = s.ProviderTurnOwner(ctx, wsB, "s1", "pt-s1-t1", "")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "and per workspace")
			_, err = s.ProviderTurnOwner(ctx, wsA, "s1", "s1-t3", "")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "a legacy copy of the turn's own id owns nothing")
		},
		"BindTurnSwapsOnlyWhatItRead": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			turns := seedSessionWithTurns(t, s, wsA, "s1", 3)
			unbound := turns[0]
			unbound.ProviderTurnID, unbound.ProviderTurnBinding = "", nil
			legacy := turns[1]
			legacy.ProviderTurnID, legacy.ProviderTurnBinding = legacy.ID, json.RawMessage(`{}`)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				if err := tx.UpsertTurn(ctx, unbound); err != nil {
					return err
				}
				return tx.UpsertTurn(ctx, legacy)
			})
			bind := func(expect forkengine.Turn, providerTurnID string) (swapped bool) {
				next := expect
				next.ProviderTurnID, next.ProviderTurnBinding, next.UpdatedAt = providerTurnID, json.RawMessage(`{"found":true}`), at(30)
				update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
					swapped, err = tx.BindTurn(ctx, next, expect)
					return err
				})
				return swapped
			}
			require.True(t, bind(unbound, "found-1"), "no binding at all")
			require.False(t, bind(unbound, "found-1b"), "a second swap from the empty binding finds it taken")
			got, err := s.GetTurn(ctx, wsA, unbound.ID)
			require.NoError(t, err)
			require.Equal(t, "found-1", got.ProviderTurnID)
			require.JSONEq(t, `{"found":true}`, string(got.ProviderTurnBinding))
			require.Equal(t, at(30), got.UpdatedAt)
			require.Equal(t, unbound.Sequence, got.Sequence, "only the binding and the time change")

			require.True(t, bind(legacy, "found-2"), "a legacy binding ({} and the canonical id) is swapped as read")
			stale := legacy
			stale.ProviderTurnBinding = json.RawMessage(`{"other":1}`)
			require.False(t, bind(stale, "found-3"), "a binding other than the stored one does not match")

			wrongSession := turns[2]
			wrongSession.SessionID = "s2"
			require.False(t, bind(wrongSession, "found-4"), "the session must match")
			running := turns[2]
			running.ID = "s1-t4"
			running.Sequence, running.Phase, running.Outcome, running.SettledAt = 4, forkengine.PhaseRunning, "", nil
			running.ProviderTurnID, running.ProviderTurnBinding = "", nil
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertTurn(ctx, running) })
			require.False(t, bind(running, "found-5"), "only a settled turn is bound by recovery")
		},
	}
}
