package forkengine_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// An append whose read of known ids missed another session's concurrent insert of one of them
// (session locks do not keep two sessions' appends apart) hits the unique id on insert; it runs
// again and answers exactly as it does when it comes second.
func TestAppendMessagesLostRaceRunsAgain(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		session, turn string
		reason        string
	}{
		"OK":                    {session: "a", turn: "a-t"},
		"ReasonMessageConflict": {session: "b", turn: "b-t", reason: forkengine.ReasonMessageConflict},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			stale := &staleStore{MemStore: forkengineMemStore()}
			h := newHarness(t, func(cfg *forkengine.Config) { cfg.Store = stale })
			for _, s := range []string{"a", "b"} {
				h.session(s, "provider-"+s, s)
				h.turn(s, s+"-t", forkengine.PhaseRunning)
			}
			appendOne := func() ([]forkengine.Message, error) {
				return h.engine.AppendMessages(h.ctx, forkengine.MessageAppend{WorkspaceID: ws, SessionID: tt.session, TurnID: tt.turn,
					Messages: []forkengine.MessageInput{{ID: "m", Role: forkengine.RoleUser, Content: "x"}}})
			}
			_, err := h.engine.AppendMessages(h.ctx, forkengine.MessageAppend{WorkspaceID: ws, SessionID: "a", TurnID: "a-t",
				Messages: []forkengine.MessageInput{{ID: "m", Role: forkengine.RoleUser, Content: "x"}}})
			require.NoError(t, err)
			second, secondErr := appendOne()

			stale.hideMessages.Store(true)
			got, err := appendOne()
			require.False(t, stale.hideMessages.Load(), "the insert was tried and refused")
			require.Equal(t, second, got)
			if tt.reason == "" {
				require.NoError(t, secondErr)
				require.NoError(t, err)
				return
			}
			requireCode(t, secondErr, forkengine.CodeInvalid, tt.reason)
			requireCode(t, err, forkengine.CodeInvalid, tt.reason)
		})
	}
}

// A report of a new turn whose read missed another session's concurrent insert of the same id
// must not move that turn (the store refuses with ErrDuplicate); it runs again and is refused as
// it is when it comes second.
func TestReportTurnLostRaceRunsAgain(t *testing.T) {
	t.Parallel()
	stale := &staleStore{MemStore: forkengineMemStore()}
	h := newHarness(t, func(cfg *forkengine.Config) { cfg.Store = stale })
	h.session("a", "provider-a", "a")
	h.session("b", "provider-b", "b")
	first := h.turn("a", "t", forkengine.PhaseRunning)
	report := func() error {
		_, err := h.engine.ReportTurn(h.ctx, forkengine.TurnReport{WorkspaceID: ws, SessionID: "b", ID: "t", Phase: forkengine.PhaseRunning})
		return err
	}
	second := report()
	requireCode(t, second, forkengine.CodeInvalid, "")

	stale.hideTurns.Store(true)
	err := report()
	require.False(t, stale.hideTurns.Load(), "the upsert was tried and refused")
	requireCode(t, err, forkengine.CodeInvalid, "")
	require.ErrorContains(t, err, "belongs to another session")
	stored, err := stale.GetTurn(h.ctx, ws, "t")
	require.NoError(t, err)
	require.Equal(t, first, stored, "the turn stays in its session")
}

// staleStore hides stored rows from an ingest's reads until the write that follows them fails on
// a unique rule, like a transaction that read before a concurrent one committed.
type staleStore struct {
	*forkenginetest.MemStore
	hideMessages atomic.Bool
	hideTurns    atomic.Bool
}

func (s *staleStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	return s.MemStore.Update(ctx, func(tx forkengine.Tx) error { return fn(staleTx{tx, s}) })
}

type staleTx struct {
	forkengine.Tx
	store *staleStore
}

func (tx staleTx) MessagesByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.Message, error) {
	if tx.store.hideMessages.Load() {
		return map[string]forkengine.Message{}, nil
	}
	return tx.Tx.MessagesByIDs(ctx, ws, ids)
}

func (tx staleTx) InsertMessages(ctx context.Context, msgs []forkengine.Message) ([]forkengine.Message, error) {
	out, err := tx.Tx.InsertMessages(ctx, msgs)
	if errors.Is(err, forkengine.ErrDuplicate) {
		tx.store.hideMessages.Store(false)
	}
	return out, err
}

func (tx staleTx) GetTurn(ctx context.Context, ws, id string) (forkengine.Turn, error) {
	if tx.store.hideTurns.Load() {
		return forkengine.Turn{}, fmt.Errorf("hidden: %w", forkengine.ErrNotFound)
	}
	return tx.Tx.GetTurn(ctx, ws, id)
}

func (tx staleTx) UpsertTurn(ctx context.Context, turn forkengine.Turn) error {
	err := tx.Tx.UpsertTurn(ctx, turn)
	if errors.Is(err, forkengine.ErrDuplicate) {
		tx.store.hideTurns.Store(false)
	}
	return err
}
