package forkenginetest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func testWorkspaceIsolation(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if err := writeOneOfEverything(ctx, tx, wsA); err != nil {
			return err
		}
		return writeOneOfEverything(ctx, tx, wsB) // the very same ids and request ids
	})
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		sess := newSession(wsB, "s1")
		sess.Title = "only in b"
		return tx.UpsertSession(ctx, sess)
	})
	a, err := s.GetSession(ctx, wsA, "s1")
	require.NoError(t, err)
	require.Equal(t, newSession(wsA, "s1"), a)
	b, err := s.GetSession(ctx, wsB, "s1")
	require.NoError(t, err)
	require.Equal(t, "only in b", b.Title)

	for _, ws := range []string{wsA, wsB} {
		turns, err := s.TurnsBySessionIDs(ctx, ws, []string{"s1"}, 0, 0)
		require.NoError(t, err)
		require.Len(t, turns["s1"], 1)
		require.Equal(t, ws, turns["s1"][0].WorkspaceID)
		msgs, err := s.MessagesByTurnIDs(ctx, ws, []string{"t1"})
		require.NoError(t, err)
		require.Len(t, msgs["t1"], 1)
		require.Equal(t, ws, msgs["t1"][0].WorkspaceID)
		op, err := s.GetOperationByRequestID(ctx, ws, "req-op1")
		require.NoError(t, err)
		require.Equal(t, ws, op.WorkspaceID)
		lineages, err := s.LineagesBySourceIDs(ctx, ws, []string{"s1"})
		require.NoError(t, err)
		require.Len(t, lineages["s1"], 1)
		n, err := s.CountOperations(ctx, ws, forkengine.OperationFilter{})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		events, err := s.EventsAfter(ctx, ws, 0, 0)
		require.NoError(t, err)
		require.Len(t, events, 1)
		require.Equal(t, ws, events[0].WorkspaceID)
	}
	_, err = s.GetSession(ctx, "ws-none", "s1")
	require.ErrorIs(t, err, forkengine.ErrNotFound)
}

func encodingTests() map[string]storeTest {
	return map[string]storeTest{
		"JSONFieldsRoundTripAsEquivalentJSON": testJSONRoundTrip,
		"TimesRoundTripAtMicrosecondsInUTC":   testTimeRoundTrip,
	}
}

func testJSONRoundTrip(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	settings := json.RawMessage(`{"nested":{"list":[1,2.5,"x",null,true]},"unicode":"é ✓ \u2028","empty":{}}`)
	binding := json.RawMessage(`{"provider":{"cursor":"abc","n":12345678901234}}`)
	sess := newSession(wsA, "src")
	sess.Settings = settings
	turn := newTurn(wsA, "src", "src-t1", 1)
	turn.ProviderTurnBinding = binding
	op := fullOperation(wsA, "op1")
	op.SourceProviderTurnBinding = binding
	op.Snapshot.Session.Settings = settings
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if err := tx.UpsertSession(ctx, sess); err != nil {
			return err
		}
		if err := tx.UpsertTurn(ctx, turn); err != nil {
			return err
		}
		return tx.InsertOperation(ctx, op)
	})
	gotSess, err := s.GetSession(ctx, wsA, "src")
	require.NoError(t, err)
	require.JSONEq(t, string(settings), string(gotSess.Settings))
	gotTurn, err := s.GetTurn(ctx, wsA, "src-t1")
	require.NoError(t, err)
	require.JSONEq(t, string(binding), string(gotTurn.ProviderTurnBinding))
	gotOp, err := s.GetOperation(ctx, wsA, "op1")
	require.NoError(t, err)
	require.JSONEq(t, string(binding), string(gotOp.SourceProviderTurnBinding))
	requireSameJSON(t, op.TargetTurnBindings, gotOp.TargetTurnBindings)
	requireSameJSON(t, op.Snapshot, gotOp.Snapshot)
	require.Len(t, gotOp.Snapshot.Turns, 2)
	require.Len(t, gotOp.Snapshot.Messages, 1)
}

func requireSameJSON(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g))
}

func testTimeRoundTrip(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	raw := time.Date(2026, 7, 8, 9, 10, 11, 987654321, zone)
	want := raw.UTC().Truncate(time.Microsecond)
	sess := newSession(wsA, "s1")
	sess.CreatedAt, sess.UpdatedAt, sess.DeletedAt = raw, raw, &raw
	turn := newTurn(wsA, "s1", "t1", 1)
	turn.StartedAt, turn.UpdatedAt, turn.SettledAt = raw, raw, &raw
	op := newOperation(wsA, "op1", "s1", "t1", "x1", forkengine.StatusCommitted)
	op.CreatedAt, op.UpdatedAt, op.DispatchedAt, op.AcceptedAt, op.CompletedAt, op.AcknowledgedAt = raw, raw, &raw, &raw, &raw, &raw
	var msgs []forkengine.Message
	update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
		if err = tx.UpsertSession(ctx, sess); err != nil {
			return err
		}
		if err = tx.UpsertTurn(ctx, turn); err != nil {
			return err
		}
		if err = tx.InsertOperation(ctx, op); err != nil {
			return err
		}
		if err = tx.InsertLineage(ctx, newLineage(wsA, "op1", "s1", "t1", "x1", raw)); err != nil {
			return err
		}
		msg := newMessage(wsA, "s1", "t1", "m1")
		msg.CreatedAt = raw
		msgs, err = tx.InsertMessages(ctx, []forkengine.Message{msg})
		return err
	})
	gotSess, err := s.GetSession(ctx, wsA, "s1")
	require.NoError(t, err)
	gotTurn, err := s.GetTurn(ctx, wsA, "t1")
	require.NoError(t, err)
	gotOp, err := s.GetOperation(ctx, wsA, "op1")
	require.NoError(t, err)
	lineages, err := s.LineagesByTargetIDs(ctx, wsA, []string{"x1"})
	require.NoError(t, err)
	gotMsgs, err := s.MessagesByIDs(ctx, wsA, []string{"m1"})
	require.NoError(t, err)
	for name, got := range map[string]time.Time{
		"session.CreatedAt": gotSess.CreatedAt, "session.UpdatedAt": gotSess.UpdatedAt, "session.DeletedAt": *gotSess.DeletedAt,
		"turn.StartedAt": gotTurn.StartedAt, "turn.UpdatedAt": gotTurn.UpdatedAt, "turn.SettledAt": *gotTurn.SettledAt,
		"op.CreatedAt": gotOp.CreatedAt, "op.UpdatedAt": gotOp.UpdatedAt, "op.DispatchedAt": *gotOp.DispatchedAt,
		"op.AcceptedAt": *gotOp.AcceptedAt, "op.CompletedAt": *gotOp.CompletedAt, "op.AcknowledgedAt": *gotOp.AcknowledgedAt,
		"lineage.ForkedAt": lineages["x1"].ForkedAt, "message.CreatedAt": gotMsgs["m1"].CreatedAt,
		"inserted message.CreatedAt": msgs[0].CreatedAt,
	} {
		require.Equal(t, want, got, name)
		require.Equal(t, time.UTC, got.Location(), name)
	}
}
