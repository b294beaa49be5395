package forkengine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// eventCount is the length of the workspace's durable event log.
func (h *harness) eventCount() int {
	h.t.Helper()
	events, err := h.store.EventsAfter(h.ctx, ws, 0, 100000)
	require.NoError(h.t, err)
	return len(events)
}

func TestReportSession(t *testing.T) {
	t.Parallel()
	t.Run("OKDefaults", func(t *testing.T) {
		h := newHarness(t)
		s, err := h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: "s-1", Provider: provider})
		require.NoError(t, err)
		require.Equal(t, "s-1", s.ID)
		require.Equal(t, forkengine.SessionRoot, s.Kind)
		require.True(t, s.Visible)
		require.JSONEq(t, `{}`, string(s.Settings))
		require.Equal(t, s.CreatedAt, s.UpdatedAt)
		require.Equal(t, 1, h.eventCount())
	})
	t.Run("OKNilFieldsKeepStoredValues", func(t *testing.T) {
		h := newHarness(t)
		first := h.session("s-1", "provider-s-1", "title")
		s, err := h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: "s-1", Provider: provider,
			Model: ptr("model-2"), Visible: ptr(false)})
		require.NoError(t, err)
		require.Equal(t, "title", s.Title)
		require.Equal(t, "provider-s-1", s.ProviderSessionID)
		require.Equal(t, "model-2", s.Model)
		require.False(t, s.Visible)
		require.JSONEq(t, string(first.Settings), string(s.Settings))
		require.Equal(t, first.CreatedAt, s.CreatedAt)
		require.True(t, s.UpdatedAt.After(first.UpdatedAt))
	})
	t.Run("OKIdenticalReportWritesNothing", func(t *testing.T) {
		h := newHarness(t)
		first := h.session("s-1", "provider-s-1", "title")
		events := h.eventCount()
		sub := h.broker.Subscribe(ws)
		defer sub.Close()
		again, err := h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: "s-1", Provider: provider,
			Title: ptr("title"), Settings: json.RawMessage(`{ "model" : "model-1" }`)})
		require.NoError(t, err)
		require.Equal(t, first, again)
		require.Equal(t, events, h.eventCount())
		require.Empty(t, sub.C())
	})
	t.Run("OKCommittedTargetIsAnOrdinarySession", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		op := h.forkAndProcess("request-1", "turn-1")
		s := h.session(op.TargetSessionID, op.TargetProviderSessionID, "renamed fork")
		require.Equal(t, "renamed fork", s.Title)
	})
	t.Run("OKPublishesAfterCommit", func(t *testing.T) {
		h := newHarness(t)
		sub := h.broker.Subscribe(ws)
		defer sub.Close()
		h.session("s-1", "provider-s-1", "title")
		ev := <-sub.C()
		require.Equal(t, forkengine.EventSessionUpserted, ev.Kind)
		require.Equal(t, "s-1", ev.SessionID)
		require.Positive(t, ev.Cursor, "published events carry their durable cursor")
	})
	tests := []struct {
		name   string
		in     forkengine.SessionReport
		code   forkengine.Code
		reason string
	}{
		{"ErrWorkspaceRequired", forkengine.SessionReport{ID: "s", Provider: provider}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrIDRequired", forkengine.SessionReport{WorkspaceID: ws, ID: " ", Provider: provider}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrIDTooLong", forkengine.SessionReport{WorkspaceID: ws, ID: strings.Repeat("x", 201), Provider: provider}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrIDLeadingSpace", forkengine.SessionReport{WorkspaceID: ws, ID: " " + source, Provider: provider}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrWorkspaceTrailingSpace", forkengine.SessionReport{WorkspaceID: ws + " ", ID: source, Provider: provider}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrProviderRequired", forkengine.SessionReport{WorkspaceID: ws, ID: "s"}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrProviderNUL", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: "sim\x00ulated"}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrProviderANSI", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: "\x1b[31mred"}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrProviderPadded", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: provider + " "}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrModelPadded", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: provider, Model: ptr(" gpt")}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrRailSectionKeyControl", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: provider, RailSectionKey: ptr("a\nb")}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrBadKind", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: provider, Kind: "branch"}, forkengine.CodeInvalid, ""},
		{"ErrSettingsNotObject", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: provider, Settings: json.RawMessage(`[1]`)}, forkengine.CodeInvalid, ""},
		{"ErrSettingsNotJSON", forkengine.SessionReport{WorkspaceID: ws, ID: "s", Provider: provider, Settings: json.RawMessage(`{`)}, forkengine.CodeInvalid, ""},
		{"ErrTargetReserved", forkengine.SessionReport{WorkspaceID: ws, ID: "target-1", Provider: provider}, forkengine.CodeForkConflict, forkengine.ReasonTargetReserved},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(1)
			_, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source,
				ThroughTurnID: "turn-1", RequestID: "r", TargetSessionID: "target-1"})
			require.NoError(t, err)
			events := h.eventCount()
			_, err = h.engine.ReportSession(h.ctx, tc.in)
			requireCode(t, err, tc.code, tc.reason)
			require.Equal(t, events, h.eventCount(), "a refused report writes nothing")
		})
	}
}

func TestReportTurn(t *testing.T) {
	t.Parallel()
	settled := func(id string, outcome forkengine.TurnOutcome) forkengine.TurnReport {
		return forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: id, Phase: forkengine.PhaseSettled, Outcome: outcome}
	}
	t.Run("OKSequencesAndPhases", func(t *testing.T) {
		h := newHarness(t)
		h.session(source, "provider-session-1", "123")
		first := h.turn(source, "turn-1", forkengine.PhaseSubmitted)
		require.Equal(t, int64(1), first.Sequence)
		require.Nil(t, first.SettledAt)
		second := h.turn(source, "turn-2", forkengine.PhaseRunning)
		require.Equal(t, int64(2), second.Sequence)
		moved := h.turn(source, "turn-1", forkengine.PhaseSettled)
		require.Equal(t, int64(1), moved.Sequence, "a known id keeps its sequence")
		require.Equal(t, first.StartedAt, moved.StartedAt)
		require.NotNil(t, moved.SettledAt)
		require.Equal(t, forkengine.OutcomeCompleted, moved.Outcome)
		require.True(t, moved.HasProviderBinding())
	})
	t.Run("OKIdenticalReportWritesNothing", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		events := h.eventCount()
		stored, err := h.store.GetTurn(h.ctx, ws, "turn-1")
		require.NoError(t, err)
		again, err := h.engine.ReportTurn(h.ctx, settled("turn-1", forkengine.OutcomeCompleted))
		require.NoError(t, err)
		require.Equal(t, stored, again)
		require.Equal(t, events, h.eventCount())
	})
	// Forks share settled turns (docs/design/shared-history.md §3): once settled, a turn's origin,
	// provider turn and binding stay, and a report that would change them writes nothing.
	t.Run("ErrSettledTurnKeepsItsBinding", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		before := h.eventCount()
		for name, change := range map[string]func(*forkengine.TurnReport){
			"binding":      func(in *forkengine.TurnReport) { in.ProviderTurnBinding = json.RawMessage(`{"schemaVersion":2}`) },
			"providerTurn": func(in *forkengine.TurnReport) { in.ProviderTurnID = ptr("provider-turn-1b") },
			"origin":       func(in *forkengine.TurnReport) { in.Origin = ptr("goal_arm") },
		} {
			in := settled("turn-1", forkengine.OutcomeCompleted)
			change(&in)
			_, err := h.engine.ReportTurn(h.ctx, in)
			require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err), name)
			require.Equal(t, forkengine.ReasonTurnSettled, forkengine.ErrorReason(err), name)
		}
		turn, err := h.store.GetTurn(h.ctx, ws, "turn-1")
		require.NoError(t, err)
		require.JSONEq(t, `{"schemaVersion":1}`, string(turn.ProviderTurnBinding), "nothing written")
		require.Equal(t, "provider-turn-1", turn.ProviderTurnID)
		require.Equal(t, before, h.eventCount())
		same, err := h.engine.ReportTurn(h.ctx, settled("turn-1", forkengine.OutcomeCompleted))
		require.NoError(t, err, "an identical report stays idempotent")
		require.Equal(t, turn, same)
	})
	t.Run("OKFirstBindingOfAnUnboundSettledTurn", func(t *testing.T) {
		h := newHarness(t)
		h.session(source, "provider-session-1", "123")
		_, err := h.engine.ReportTurn(h.ctx, settled("turn-1", forkengine.OutcomeCompleted))
		require.NoError(t, err)
		in := settled("turn-1", forkengine.OutcomeCompleted)
		in.ProviderTurnID, in.ProviderTurnBinding = ptr("provider-turn-1"), json.RawMessage(`{"schemaVersion":1}`)
		turn, err := h.engine.ReportTurn(h.ctx, in)
		require.NoError(t, err)
		require.True(t, turn.HasProviderBinding())
		in.ProviderTurnBinding = json.RawMessage(`{"schemaVersion":2}`)
		_, err = h.engine.ReportTurn(h.ctx, in)
		require.Equal(t, forkengine.ReasonTurnSettled, forkengine.ErrorReason(err), "a binding once set is not replaced")
	})
	tests := []struct {
		name   string
		in     forkengine.TurnReport
		code   forkengine.Code
		reason string
	}{
		{"ErrSessionNotFound", forkengine.TurnReport{WorkspaceID: ws, SessionID: "missing", ID: "t", Phase: forkengine.PhaseRunning}, forkengine.CodeNotFound, ""},
		{"ErrSessionDeleted", forkengine.TurnReport{WorkspaceID: ws, SessionID: "deleted", ID: "t", Phase: forkengine.PhaseRunning}, forkengine.CodeNotFound, ""},
		{"ErrTurnOfAnotherSession", forkengine.TurnReport{WorkspaceID: ws, SessionID: "other", ID: "turn-1", Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted}, forkengine.CodeInvalid, ""},
		{"ErrPhaseBackwards", forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: "turn-1", Phase: forkengine.PhaseRunning}, forkengine.CodeInvalid, forkengine.ReasonTurnPhaseBackwards},
		{"ErrOutcomeChanged", settled("turn-1", forkengine.OutcomeFailed), forkengine.CodeInvalid, forkengine.ReasonTurnOutcomeChanged},
		{"ErrSettledWithoutOutcome", settled("turn-2", ""), forkengine.CodeInvalid, ""},
		{"ErrOutcomeBeforeSettled", forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: "turn-2", Phase: forkengine.PhaseRunning, Outcome: forkengine.OutcomeCompleted}, forkengine.CodeInvalid, ""},
		{"ErrBadPhase", forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: "turn-2", Phase: "paused"}, forkengine.CodeInvalid, ""},
		{"ErrBadOutcome", settled("turn-2", "exploded"), forkengine.CodeInvalid, ""},
		{"ErrBindingNotObject", forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: "turn-2", Phase: forkengine.PhaseRunning, ProviderTurnBinding: json.RawMessage(`"x"`)}, forkengine.CodeInvalid, ""},
		{"ErrIDRequired", forkengine.TurnReport{WorkspaceID: ws, SessionID: source, Phase: forkengine.PhaseRunning}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrSessionIDPadded", forkengine.TurnReport{WorkspaceID: ws, SessionID: source + " ", ID: "t", Phase: forkengine.PhaseRunning}, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(1)
			h.session("other", "provider-other", "other")
			h.session("deleted", "provider-deleted", "deleted")
			require.NoError(t, h.engine.DeleteSession(h.ctx, ws, "deleted", false))
			events := h.eventCount()
			before, err := h.store.GetTurn(h.ctx, ws, "turn-1")
			require.NoError(t, err)
			_, err = h.engine.ReportTurn(h.ctx, tc.in)
			requireCode(t, err, tc.code, tc.reason)
			require.Equal(t, events, h.eventCount(), "a refused report writes nothing")
			after, err := h.store.GetTurn(h.ctx, ws, "turn-1")
			require.NoError(t, err)
			require.Equal(t, before, after)
		})
	}
}

func TestAppendMessages(t *testing.T) {
	t.Parallel()
	appendTo := func(turnID string, msgs ...forkengine.MessageInput) forkengine.MessageAppend {
		return forkengine.MessageAppend{WorkspaceID: ws, SessionID: source, TurnID: turnID, Messages: msgs}
	}
	user := func(id, content string) forkengine.MessageInput {
		return forkengine.MessageInput{ID: id, Role: forkengine.RoleUser, Content: content}
	}
	t.Run("OK", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		sub := h.broker.Subscribe(ws)
		defer sub.Close()
		msgs, err := h.engine.AppendMessages(h.ctx, appendTo("turn-1", user("", "generated id"), user("m-2", "second")))
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		require.NotEmpty(t, msgs[0].ID)
		require.Less(t, msgs[0].Position, msgs[1].Position)
		ev := <-sub.C()
		require.Equal(t, forkengine.EventTurnUpserted, ev.Kind)
		require.Equal(t, "turn-1", ev.TurnID)
	})
	t.Run("OKRepeatIsSkipped", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		first, err := h.engine.AppendMessages(h.ctx, appendTo("turn-1", user("m-1", "hello")))
		require.NoError(t, err)
		events := h.eventCount()
		again, err := h.engine.AppendMessages(h.ctx, appendTo("turn-1", user("m-1", "hello"), user("m-1", "hello")))
		require.NoError(t, err)
		require.Equal(t, first, again)
		require.Equal(t, events, h.eventCount())
		mixed, err := h.engine.AppendMessages(h.ctx, appendTo("turn-1", user("m-1", "hello"), user("m-2", "new")))
		require.NoError(t, err)
		require.Equal(t, []string{"m-1", "m-2"}, []string{mixed[0].ID, mixed[1].ID})
	})
	t.Run("OKLimits", func(t *testing.T) {
		h := newHarness(t)
		h.seed(1)
		many := make([]forkengine.MessageInput, forkengine.MaxMessagesPerAppend)
		for i := range many {
			many[i] = forkengine.MessageInput{Role: forkengine.RoleTool, Content: "x"}
		}
		many[0].Content = strings.Repeat("x", forkengine.MaxMessageBytes)
		msgs, err := h.engine.AppendMessages(h.ctx, appendTo("turn-1", many...))
		require.NoError(t, err)
		require.Len(t, msgs, forkengine.MaxMessagesPerAppend)
	})
	tests := []struct {
		name   string
		in     forkengine.MessageAppend
		code   forkengine.Code
		reason string
	}{
		{"ErrMessageConflict", appendTo("turn-1", user("msg-turn-1-user", "other content")), forkengine.CodeInvalid, forkengine.ReasonMessageConflict},
		{"ErrMessageConflictWithinAppend", appendTo("turn-1", user("m", "a"), user("m", "b")), forkengine.CodeInvalid, forkengine.ReasonMessageConflict},
		{"ErrRoleChanged", appendTo("turn-1", forkengine.MessageInput{ID: "msg-turn-1-user", Role: forkengine.RoleSystem, Content: "prompt of turn-1"}), forkengine.CodeInvalid, forkengine.ReasonMessageConflict},
		{"ErrBadRole", appendTo("turn-1", forkengine.MessageInput{Role: "robot", Content: "x"}), forkengine.CodeInvalid, ""},
		{"ErrContentTooLarge", appendTo("turn-1", user("big", strings.Repeat("x", forkengine.MaxMessageBytes+1))), forkengine.CodeInvalid, ""},
		{"ErrTooManyMessages", appendTo("turn-1", make([]forkengine.MessageInput, forkengine.MaxMessagesPerAppend+1)...), forkengine.CodeInvalid, ""},
		{"ErrTurnNotFound", appendTo("missing", user("m", "x")), forkengine.CodeNotFound, ""},
		{"ErrTurnOfAnotherSession", appendTo("other-turn", user("m", "x")), forkengine.CodeInvalid, ""},
		{"ErrSessionNotFound", forkengine.MessageAppend{WorkspaceID: ws, SessionID: "missing", TurnID: "turn-1", Messages: []forkengine.MessageInput{user("m", "x")}}, forkengine.CodeNotFound, ""},
		{"ErrIDTooLong", appendTo("turn-1", user(strings.Repeat("m", 201), "x")), forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		{"ErrIDPadded", appendTo("turn-1", user("m-1 ", "x")), forkengine.CodeInvalid, forkengine.ReasonInvalidID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(1)
			h.session("other", "provider-other", "other")
			h.turn("other", "other-turn", forkengine.PhaseRunning)
			events := h.eventCount()
			_, err := h.engine.AppendMessages(h.ctx, tc.in)
			requireCode(t, err, tc.code, tc.reason)
			require.Equal(t, events, h.eventCount())
		})
	}
}
