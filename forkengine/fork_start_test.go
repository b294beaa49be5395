package forkengine_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func TestStartFork(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-7")
		status, phase := op.Status.Public()
		require.Equal(t, forkengine.PublicAccepted, status)
		require.Equal(t, forkengine.PhaseFrozen, phase)
		require.NotEmpty(t, op.ID)
		require.Equal(t, "provider-session-1", op.SourceProviderSessionID)
		require.Equal(t, "provider-turn-7", op.SourceProviderTurnID)
		require.JSONEq(t, `{"schemaVersion":1}`, string(op.SourceProviderTurnBinding))
		require.Equal(t, "scripted", op.DriverKind)
		require.Equal(t, "v1", op.DriverVersion)
		require.Equal(t, "123 (2)", op.TargetTitle)
		require.Equal(t, 7, op.Snapshot.PrefixTurns)
		require.Equal(t, 7, op.Snapshot.BoundTurns)
		require.Equal(t, "turn-7", op.Snapshot.Boundary.ID)
		require.Equal(t, []forkengine.HistorySegment{{OwnerWorkspaceID: ws, OwnerSessionID: source, To: 7, Watermark: 14}},
			op.Snapshot.Segments, "the source's rows through turn 7, and its 14 messages")
		require.Nil(t, op.Snapshot.Turns, "nothing of the transcript is copied")
		require.Equal(t, 0, h.driver.ForkCalls(), "StartFork returns before any dispatch")
		require.Equal(t, op, h.stored(op.ID))
	})
	t.Run("OKSnapshotStopsAtTheBoundary", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-3")
		require.Equal(t, 3, op.Snapshot.PrefixTurns)
		require.Equal(t, int64(3), op.Snapshot.Segments[0].To)
		committed := h.process(op)
		turns, err := h.store.TurnsThrough(h.ctx, ws, committed.TargetSessionID, 100)
		require.NoError(t, err)
		require.Len(t, turns, 3)
		msgs, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{turns[0].ID, turns[2].ID})
		require.NoError(t, err)
		require.Equal(t, "prompt of turn-1", msgs[turns[0].ID][0].Content)
		require.Equal(t, "answer of turn-3", msgs[turns[2].ID][1].Content)
	})
	t.Run("OKSettledBoundaryWhileANewerTurnRuns", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		h.turn(source, "turn-8", forkengine.PhaseRunning)
		op := h.mustFork("request-1", "turn-7")
		require.Equal(t, 7, op.Snapshot.PrefixTurns)
	})
	t.Run("OKTargetDerivedFromRequest", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.mustFork("request-1", "turn-7")
		require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, op.TargetSessionID)
		replay := h.mustFork("request-1", "turn-7")
		require.Equal(t, op.ID, replay.ID)
		explicit, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source,
			ThroughTurnID: "turn-7", RequestID: "request-1", TargetSessionID: op.TargetSessionID})
		require.NoError(t, err, "naming the derived target is the same request")
		require.Equal(t, op.ID, explicit.ID)
	})
	t.Run("OKReplayReturnsTheOperationAsItIsNow", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		op := h.forkAndProcess("request-1", "turn-7")
		require.Equal(t, forkengine.StatusCommitted, op.Status)
		replay := h.mustFork("request-1", "turn-7")
		require.Equal(t, op, replay)
		require.Equal(t, 1, h.driver.ForkCalls())
		require.Equal(t, 1, h.operations())
	})
	t.Run("ErrIdsAreNotTrimmed", func(t *testing.T) {
		h := newHarness(t)
		h.seed(7)
		padded := []forkengine.ForkInput{
			{WorkspaceID: " " + ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "r"},
			{WorkspaceID: ws, SourceSessionID: source + "\t", ThroughTurnID: "turn-7", RequestID: "r"},
			{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: " turn-7", RequestID: "r"},
			{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "request-1 "},
			{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "r", TargetSessionID: " target-1"},
			{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "r\u00a0"},
		}
		events := h.eventCount()
		for _, in := range padded {
			_, err := h.engine.StartFork(h.ctx, in)
			requireCode(t, err, forkengine.CodeInvalid, forkengine.ReasonInvalidID)
		}
		require.Zero(t, h.operations(), "a refused fork prepares nothing")
		require.Equal(t, events, h.eventCount())
	})
}

func TestStartForkErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		setup  func(h *harness)
		input  forkengine.ForkInput
		code   forkengine.Code
		reason string
	}{
		{name: "ErrWorkspaceRequired", input: forkengine.ForkInput{SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "r"}, code: forkengine.CodeInvalid, reason: forkengine.ReasonInvalidID},
		{name: "ErrRequestIDRequired", input: forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "  "}, code: forkengine.CodeInvalid, reason: forkengine.ReasonInvalidID},
		{name: "ErrTurnIDRequired", input: forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source, RequestID: "r"}, code: forkengine.CodeInvalid, reason: forkengine.ReasonInvalidID},
		{name: "ErrIDTooLong", input: forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: strings.Repeat("r", 201)}, code: forkengine.CodeInvalid, reason: forkengine.ReasonInvalidID},
		{name: "ErrSourceIsTarget", input: forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "r", TargetSessionID: source}, code: forkengine.CodeInvalid},
		{name: "ErrSourceNotFound", input: forkInput("missing", "turn-7"), code: forkengine.CodeNotFound},
		{name: "ErrSourceDeleted", setup: func(h *harness) {
			require.NoError(t, h.engine.DeleteSession(h.ctx, ws, source, false))
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeNotFound},
		{name: "ErrSourceNotRoot", setup: func(h *harness) {
			_, err := h.engine.ReportSession(h.ctx, forkengine.SessionReport{WorkspaceID: ws, ID: source, Provider: provider, Kind: forkengine.SessionChild})
			require.NoError(t, err)
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonSourceNotRoot},
		{name: "ErrProviderSessionMissing", setup: func(h *harness) { // from before provider_session_changed
			h.rewriteSession(source, func(s *forkengine.Session) { s.ProviderSessionID = "" })
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonProviderSessionMissing},
		{name: "ErrTurnNotFound", input: forkInput(source, "turn-99"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonTurnNotFound},
		{name: "ErrTurnOfAnotherSession", setup: func(h *harness) {
			h.session("other", "provider-session-other", "other")
			h.turn("other", "other-turn", forkengine.PhaseSettled)
		}, input: forkInput(source, "other-turn"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonTurnNotFound},
		{name: "ErrTurnNotSettledRunning", setup: func(h *harness) {
			h.turn(source, "turn-8", forkengine.PhaseRunning)
		}, input: forkInput(source, "turn-8"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonTurnNotSettled},
		{name: "ErrTurnNotSettledWaiting", setup: func(h *harness) {
			h.turn(source, "turn-8", forkengine.PhaseWaiting)
		}, input: forkInput(source, "turn-8"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonTurnNotSettled},
		{name: "ErrProviderTurnMissingLegacyID", setup: func(h *harness) {
			reportTurn(t, h, "turn-8", ptr("turn-8"), `{"schemaVersion":1}`)
		}, input: forkInput(source, "turn-8"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonProviderTurnMissing},
		{name: "ErrProviderTurnMissingEmptyBinding", setup: func(h *harness) {
			reportTurn(t, h, "turn-8", ptr("provider-turn-8"), `{}`)
		}, input: forkInput(source, "turn-8"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonProviderTurnMissing},
		{name: "ErrProviderTurnMissingNoBinding", setup: func(h *harness) {
			reportTurn(t, h, "turn-8", nil, "")
		}, input: forkInput(source, "turn-8"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonProviderTurnMissing},
		{name: "ErrProviderTurnUnforkable", setup: func(h *harness) {
			h.driver.SetTurnProbe("provider-turn-7", false)
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonProviderTurnUnforkable},
		{name: "ErrProviderTurnUnforkableProbeError", setup: func(h *harness) {
			h.driver.SetProbe(true, errors.New("probe transport failed"))
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonProviderTurnUnforkable},
		{name: "ErrUnsupportedNoDriver", setup: func(h *harness) { // from before provider_session_changed
			h.rewriteSession(source, func(s *forkengine.Session) { s.Provider = "nobody" })
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkUnsupported},
		{name: "ErrUnsupportedDescribeError", setup: func(h *harness) {
			h.driver.SetDescriptor(forkengine.Descriptor{}, errors.New("runtime unavailable"))
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkUnsupported},
		{name: "ErrUnsupportedNoThroughTurn", setup: func(h *harness) {
			h.driver.SetDescriptor(forkengine.Descriptor{Kind: "k", Version: "v1", StateBindingMode: forkengine.BindingHostCopy, FullSession: true}, nil)
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkUnsupported},
		{name: "ErrUnsupportedInvalidMode", setup: func(h *harness) {
			h.driver.SetDescriptor(forkengine.Descriptor{Kind: "k", Version: "v1", StateBindingMode: "rsync", ThroughTurn: true}, nil)
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkUnsupported},
		{name: "ErrTargetExists", setup: func(h *harness) {
			h.session("target-1", "provider-session-x", "taken")
		}, input: forkTo("target-1"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonTargetReserved},
		{name: "ErrTargetDeletedSessionStillTaken", setup: func(h *harness) {
			h.session("target-1", "provider-session-x", "taken")
			require.NoError(t, h.engine.DeleteSession(h.ctx, ws, "target-1", false))
		}, input: forkTo("target-1"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonTargetReserved},
		{name: "ErrTargetReservedByAnotherFork", setup: func(h *harness) {
			_, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source,
				ThroughTurnID: "turn-6", RequestID: "other-request", TargetSessionID: "target-1"})
			require.NoError(t, err)
		}, input: forkTo("target-1"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonTargetReserved},
		{name: "ErrRequestConflict", setup: func(h *harness) {
			h.mustFork("r", "turn-6")
		}, input: forkInput(source, "turn-7"), code: forkengine.CodeForkConflict, reason: forkengine.ReasonRequestConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(7)
			if tc.setup != nil {
				tc.setup(h)
			}
			before := h.operations()
			op, err := h.engine.StartFork(h.ctx, tc.input)
			requireCode(t, err, tc.code, tc.reason)
			require.Equal(t, forkengine.ForkOperation{}, op)
			require.Equal(t, before, h.operations(), "a refused fork creates no operation")
			require.Equal(t, 0, h.driver.ForkCalls())
		})
	}
}

func forkInput(sourceID, turnID string) forkengine.ForkInput {
	return forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: sourceID, ThroughTurnID: turnID, RequestID: "r"}
}

func forkTo(target string) forkengine.ForkInput {
	return forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "r", TargetSessionID: target}
}

// reportTurn reports a settled turn-8 with a chosen provider binding.
func reportTurn(t *testing.T, h *harness, id string, providerTurnID *string, binding string) {
	t.Helper()
	in := forkengine.TurnReport{WorkspaceID: ws, SessionID: source, ID: id, Phase: forkengine.PhaseSettled,
		Outcome: forkengine.OutcomeCompleted, ProviderTurnID: providerTurnID}
	if binding != "" {
		in.ProviderTurnBinding = json.RawMessage(binding)
	}
	_, err := h.engine.ReportTurn(h.ctx, in)
	require.NoError(t, err)
}
