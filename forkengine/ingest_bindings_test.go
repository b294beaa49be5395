package forkengine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The ingest binding rules (issue 25): a bound turn's binding changes only through binding
// recovery, a provider turn id another turn of the session is bound to is refused, and a session
// keeps its provider session once it has one. Every refusal writes nothing.

// storeSnapshot is everything the refusals below must leave as it was.
type storeSnapshot struct {
	sessions map[string]forkengine.Session
	turns    map[string][]forkengine.Turn
	events   int
}

func (h *harness) snapshot() storeSnapshot {
	h.t.Helper()
	sessions, err := h.store.ListSessions(h.ctx, ws, forkengine.SessionFilter{IncludeDeleted: true}, forkengine.PageCursor{}, 0)
	require.NoError(h.t, err)
	out := storeSnapshot{sessions: map[string]forkengine.Session{}, events: h.eventCount()}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		out.sessions[s.ID], ids[i] = s, s.ID
	}
	out.turns, err = h.store.TurnsBySessionIDs(h.ctx, ws, ids, 0, 0)
	require.NoError(h.t, err)
	return out
}

func TestReportTurnBindingRules(t *testing.T) {
	t.Parallel()
	report := func(h *harness, id string, phase forkengine.TurnPhase, providerTurnID *string, binding string) (forkengine.Turn, error) {
		in := forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: id, Phase: phase, ProviderTurnID: providerTurnID}
		if phase == forkengine.PhaseSettled {
			in.Outcome = forkengine.OutcomeCompleted
		}
		if binding != "" {
			in.ProviderTurnBinding = json.RawMessage(binding)
		}
		return h.engine.ReportTurn(h.ctx, in)
	}
	t.Run("ErrBoundTurnKeepsItsBinding", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		// A running turn that is bound already keeps its binding too: a fork sends it.
		_, err := report(h, "turn-2", forkengine.PhaseRunning, ptr("provider-turn-2"), `{"schemaVersion":1}`)
		require.NoError(t, err)
		before := h.snapshot()
		// A settled turn never changes at all (turn_settled, the rule forks sharing it rely on);
		// a bound turn that is not settled yet keeps its binding (provider_binding_changed).
		for name, change := range map[string]struct {
			id      string
			phase   forkengine.TurnPhase
			turn    *string
			binding string
			reason  string
		}{
			"settled provider turn": {"turn-1", forkengine.PhaseSettled, ptr("provider-turn-1b"), "", forkengine.ReasonTurnSettled},
			"settled binding":       {"turn-1", forkengine.PhaseSettled, nil, `{"schemaVersion":2}`, forkengine.ReasonTurnSettled},
			"settled cleared":       {"turn-1", forkengine.PhaseSettled, ptr(""), "", forkengine.ReasonTurnSettled},
			"running provider turn": {"turn-2", forkengine.PhaseRunning, ptr("provider-turn-2b"), "", forkengine.ReasonProviderBindingChanged},
			"running binding":       {"turn-2", forkengine.PhaseWaiting, nil, `{"schemaVersion":3}`, forkengine.ReasonProviderBindingChanged},
			"running cleared":       {"turn-2", forkengine.PhaseWaiting, ptr(""), "", forkengine.ReasonProviderBindingChanged},
			"settling both": {"turn-2", forkengine.PhaseSettling, ptr("provider-turn-2b"), `{"schemaVersion":3}`,
				forkengine.ReasonProviderBindingChanged},
		} {
			_, err := report(h, change.id, change.phase, change.turn, change.binding)
			requireCode(t, err, forkengine.CodeInvalid, change.reason)
			require.Equal(t, before, h.snapshot(), "%s: the refused report wrote nothing", name)
		}
		same, err := report(h, "turn-1", forkengine.PhaseSettled, ptr("provider-turn-1"), `{ "schemaVersion": 1 }`)
		require.NoError(t, err, "the same binding, spaced otherwise, is no change")
		require.Equal(t, "provider-turn-1", same.ProviderTurnID)
		require.Equal(t, before, h.snapshot())
	})
	t.Run("OKUnboundTurnGetsItsFirstBinding", func(t *testing.T) {
		h := newHarness(t)
		h.session(source, "provider-session-1", "123")
		_, err := report(h, "turn-1", forkengine.PhaseRunning, ptr("provider-turn-1"), "")
		require.NoError(t, err)
		_, err = report(h, "turn-1", forkengine.PhaseRunning, ptr("provider-turn-1b"), "")
		require.NoError(t, err, "without a binding the turn is not bound yet")
		turn, err := report(h, "turn-1", forkengine.PhaseSettled, nil, `{"schemaVersion":1}`)
		require.NoError(t, err)
		require.True(t, turn.HasProviderBinding())
		require.Equal(t, "provider-turn-1b", turn.ProviderTurnID)
		// A legacy row copying the canonical id is unbound, so it may get a real provider turn
		// (before it settles: a settled turn's binding is written once, only when it has none).
		_, err = report(h, "turn-2", forkengine.PhaseRunning, ptr("turn-2"), `{"schemaVersion":1}`)
		require.NoError(t, err)
		turn, err = report(h, "turn-2", forkengine.PhaseSettled, ptr("provider-turn-2"), "")
		require.NoError(t, err)
		require.True(t, turn.HasProviderBinding())
	})
	t.Run("ErrProviderTurnOwnedByAnotherTurn", func(t *testing.T) {
		h := newHarness(t)
		h.seed(2)
		_, err := report(h, "turn-3", forkengine.PhaseRunning, nil, "")
		require.NoError(t, err)
		before := h.snapshot()
		for name, id := range map[string]string{"a new turn": "turn-4", "a known unbound turn": "turn-3"} {
			_, err := report(h, id, forkengine.PhaseSettled, ptr("provider-turn-1"), `{"schemaVersion":1}`)
			requireCode(t, err, forkengine.CodeInvalid, forkengine.ReasonProviderTurnDuplicate)
			require.Equal(t, before, h.snapshot(), "%s: the refused report wrote nothing", name)
		}
		// Another session may name the same provider turn id: ownership is per session.
		h.session("other", "provider-session-other", "other")
		_, err = h.engine.ReportTurn(h.ctx, forkengine.TurnReport{WorkspaceID: ws, SessionID: "other", ID: "other-1",
			Phase: forkengine.PhaseRunning, ProviderTurnID: ptr("provider-turn-1")})
		require.NoError(t, err)
		// A legacy copy of its own id owns nothing: turn-5's provider turn id "turn-6" is free.
		_, err = report(h, "turn-6", forkengine.PhaseRunning, ptr("turn-6"), "")
		require.NoError(t, err)
		_, err = report(h, "turn-5", forkengine.PhaseRunning, ptr("turn-6"), "")
		require.NoError(t, err)
	})
}

func TestReportSessionKeepsItsProviderSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	before := h.snapshot()
	for name, in := range map[string]forkengine.SessionReport{
		"another provider session": {WorkspaceID: ws, ID: source, Provider: provider, ProviderSessionID: ptr("provider-session-2")},
		"cleared":                  {WorkspaceID: ws, ID: source, Provider: provider, ProviderSessionID: ptr("")},
		"another provider":         {WorkspaceID: ws, ID: source, Provider: "simulated"},
	} {
		_, err := h.engine.ReportSession(h.ctx, in)
		requireCode(t, err, forkengine.CodeInvalid, forkengine.ReasonProviderSessionChanged)
		require.Equal(t, before, h.snapshot(), "%s: the refused report wrote nothing", name)
	}
	s, err := h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: source, Provider: provider,
		ProviderSessionID: ptr("provider-session-1"), Title: ptr("renamed")})
	require.NoError(t, err, "the same provider session with other fields is a normal report")
	require.Equal(t, "renamed", s.Title)

	// A session reported without one may get one, once.
	_, err = h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: "late", Provider: provider})
	require.NoError(t, err)
	s, err = h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: "late", Provider: "simulated",
		ProviderSessionID: ptr("provider-late")})
	require.NoError(t, err)
	require.Equal(t, "provider-late", s.ProviderSessionID)
	_, err = h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: "late", Provider: "simulated",
		ProviderSessionID: ptr("provider-late-2")})
	requireCode(t, err, forkengine.CodeInvalid, forkengine.ReasonProviderSessionChanged)
}
