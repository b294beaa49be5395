package forkenginetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// interactionsFailClosedTests: every case in which reference §6.2 fails a fork closed on an
// interaction of the snapshot (§6.1: the interactions of the prefix's turns), on the store under
// test. A row the API would refuse is written below the engine, as a store corrupted or filled
// by another writer would hold it; the fork then fails at prepare with FORK_CONFLICT and its
// reason, before the provider is asked for a child: no operation, no reservation, no fork call,
// and the same request succeeds once the row is gone. The cases a store cannot hold (two rows
// of one id, or of one turn and request id, hence two that would collide in the child) are
// refused by the store itself, so no snapshot can freeze them.
func interactionsFailClosedTests() map[string]storeTest {
	// bad stores a prefix interaction changed by mutate and forks through the boundary; fix,
	// when the row can be repaired in place, repairs it and the same request is retried.
	bad := func(reason string, mutate func(*forkengine.Interaction), fix func(*forkengine.Interaction)) storeTest {
		return func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-6", forkengine.PhaseSettled, true, nil)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			row := closedInteraction("turn-6", "ask-1")
			mutate(&row)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.InsertInteractions(ctx, []forkengine.Interaction{row})
			})
			_, err := r.fork("request-1", "turn-7")
			requireReason(t, err, forkengine.CodeForkConflict, reason)
			require.Zero(t, r.operations(), "no operation")
			require.Zero(t, r.driver.ForkCalls(), "the provider is never asked")
			if fix == nil {
				return
			}
			fix(&row)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertInteraction(ctx, row) })
			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err, "the same request succeeds once the row is repaired: nothing was reserved")
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
		}
	}
	return map[string]storeTest{
		"GivenAPrefixInteractionWithAnEmptyRequestID_WhenForked_ThenInteractionUnmappable": bad(forkengine.ReasonInteractionUnmappable,
			func(i *forkengine.Interaction) { i.RequestID = "" }, func(i *forkengine.Interaction) { i.RequestID = "ask-1" }),
		"GivenAPrefixInteractionWithAnEmptyID_WhenForked_ThenInteractionUnmappable": bad(forkengine.ReasonInteractionUnmappable,
			func(i *forkengine.Interaction) { i.ID = "" }, nil),
		// The reference fails a fork closed on an interaction of a prefix turn that names another
		// session (interaction_outside_prefix); here the store refuses to hold one, inserted or
		// updated, so a prepare that finds interactions by session can never miss it.
		"GivenAPrefixTurnsInteractionOwnedByAnotherSession_WhenStored_ThenRefusedSoNoSnapshotHoldsIt": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-6", forkengine.PhaseSettled, true, nil)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			row := closedInteraction("turn-6", "ask-1")
			row.SessionID = "other-session"
			err := s.Update(r.ctx, func(tx forkengine.Tx) error { return tx.InsertInteractions(r.ctx, []forkengine.Interaction{row}) })
			require.ErrorIs(t, err, forkengine.ErrNotFound, "inserted")
			row.SessionID = scenarioSource
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.InsertInteractions(ctx, []forkengine.Interaction{row})
			})
			moved := row
			moved.SessionID = "other-session"
			err = s.Update(r.ctx, func(tx forkengine.Tx) error { return tx.UpsertInteraction(r.ctx, moved) })
			require.ErrorIs(t, err, forkengine.ErrNotFound, "updated")
			got, err := s.InteractionsByTurnIDs(r.ctx, scenarioWS, []string{"turn-6"})
			require.NoError(t, err)
			require.Len(t, got["turn-6"], 1)
			require.Equal(t, scenarioSource, got["turn-6"][0].SessionID, "the refused update changed nothing")
			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
		},
		"GivenTwoInteractionsOfOneTurnAndRequest_WhenStored_ThenRefusedSoNoSnapshotHoldsThem": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			first, second := closedInteraction("turn-7", "ask-1"), closedInteraction("turn-7", "ask-1")
			second.ID = "interaction-2"
			err := s.Update(r.ctx, func(tx forkengine.Tx) error {
				return tx.InsertInteractions(r.ctx, []forkengine.Interaction{first, second})
			})
			require.ErrorIs(t, err, forkengine.ErrDuplicate)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.InsertInteractions(ctx, []forkengine.Interaction{first})
			})
			for _, dup := range []forkengine.Interaction{second, first} { // the same (turn, request), then the same id
				err := s.Update(r.ctx, func(tx forkengine.Tx) error { return tx.InsertInteractions(r.ctx, []forkengine.Interaction{dup}) })
				require.ErrorIs(t, err, forkengine.ErrDuplicate, dup.ID)
			}
			got, err := s.InteractionsByTurnIDs(r.ctx, scenarioWS, []string{"turn-7"})
			require.NoError(t, err)
			require.Len(t, got["turn-7"], 1, "all or none: the refused batch left nothing")
			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
		},
		"GivenAnInteractionOfATurnAfterTheBoundary_WhenForked_ThenNotFrozenAndTheForkCommits": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			r.turn("turn-8", forkengine.PhaseSettled, true, nil)
			row := closedInteraction("turn-8", "")
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.InsertInteractions(ctx, []forkengine.Interaction{row})
			})
			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err, "an unmappable row outside the prefix is no part of the snapshot")
			require.Empty(t, op.Snapshot.Interactions)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
		},
	}
}

// closedInteraction is an answered permission prompt of S's turn.
func closedInteraction(turn, request string) forkengine.Interaction {
	answered := baseTime
	return forkengine.Interaction{WorkspaceID: scenarioWS, ID: "interaction-" + turn, SessionID: scenarioSource, TurnID: turn,
		RequestID: request, Kind: forkengine.InteractionPermission, Prompt: json.RawMessage(`{"tool":"shell"}`),
		State: forkengine.InteractionAnswered, Answer: json.RawMessage(`{"allow":true}`),
		CreatedAt: baseTime, UpdatedAt: baseTime, AnsweredAt: &answered}
}
