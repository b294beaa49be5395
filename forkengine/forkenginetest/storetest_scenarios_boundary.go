package forkenginetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// boundaryScenarioTests are the reference's §9 store scenarios about the boundary turn and the
// source while it is forked (47, 48, 49, 53, 55, 57), run by an engine over the store under test so
// each holds on the in-memory store, SQLite and PostgreSQL. Each name is the scenario's given /
// when / then.
func boundaryScenarioTests() map[string]storeTest {
	return map[string]storeTest{
		// 47. Given the selected turn is not settled (running or waiting, and the other unsettled
		// phases), when its boundary is read and when it is forked, then the read answers
		// unavailable and the fork is refused with turn_not_settled: no operation, no driver call.
		"Scenario47_GivenAnUnsettledSelectedTurn_WhenForked_ThenTurnNotSettled": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			for _, phase := range []forkengine.TurnPhase{forkengine.PhaseRunning, forkengine.PhaseWaiting,
				forkengine.PhaseSubmitted, forkengine.PhaseSettling} {
				id := "turn-" + string(phase)
				r.turn(id, phase, true, nil)
				available := r.forkable(id)
				require.False(t, available, "%s: the boundary check refuses it", phase)
				require.Equal(t, forkengine.BindingUnavailable, forkengine.TurnBindingState(r.storedTurn(id), available), "%s", phase)

				_, err := r.fork("request-"+id, id)

				requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonTurnNotSettled)
			}
			require.Zero(t, r.operations(), "prepare wrote nothing")
			require.Zero(t, r.driver.ForkCalls())
			require.Zero(t, r.driver.RecoverCalls(), "an unsettled turn is not repaired")
		},
		// 48. Given turn-7 settled and bound while a newer turn-8 is running (the session's active
		// turn), when turn-7 is forked, then the fork commits and the child holds the history up to
		// turn-7 only.
		"Scenario48_GivenASettledBoundaryWhileANewerTurnIsActive_WhenForked_ThenCommitted": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			r.turn("turn-8", forkengine.PhaseRunning, false, nil)
			active, err := s.ActiveTurnsBySessionIDs(r.ctx, scenarioWS, []string{scenarioSource})
			require.NoError(t, err)
			require.Equal(t, "turn-8", active[scenarioSource].ID, "the newer turn is active")
			require.True(t, r.forkable("turn-7"))

			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)
			op = r.process(op)

			require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
			turns, err := s.TurnsThrough(r.ctx, scenarioWS, op.TargetSessionID, 100)
			require.NoError(t, err)
			require.Len(t, turns, 1, "the running turn after the boundary is not copied")
			require.Equal(t, op.TargetTurnID, turns[0].ID)
			require.Equal(t, forkengine.PhaseRunning, r.storedTurn("turn-8").Phase, "the source's active turn is untouched")
		},
		// 49. Given a settled turn whose binding is a legacy one (its provider turn id is its own
		// id, or its binding is {}), and no submit proof to recover it with, when it is forked,
		// then the fork is refused with provider_turn_missing and the read shows it
		// recovery_required; no recovery is tried, nothing is written.
		"Scenario49_GivenALegacyBinding_WhenForked_ThenProviderTurnMissing": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			legacy := map[string]forkengine.TurnReport{
				"turn-self":  {ProviderTurnID: strPtr("turn-self"), ProviderTurnBinding: json.RawMessage(`{"schemaVersion":1}`)},
				"turn-empty": {ProviderTurnID: strPtr("provider-turn-empty"), ProviderTurnBinding: json.RawMessage(`{}`)},
			}
			for id, in := range legacy {
				in.WorkspaceID, in.SessionID, in.ID = scenarioWS, scenarioSource, id
				in.Phase, in.Outcome = forkengine.PhaseSettled, forkengine.OutcomeCompleted
				_, err := r.engine.ReportTurn(r.ctx, in)
				require.NoError(t, err, "a legacy binding is still a report the store keeps")
			}
			events := len(r.events())
			for id := range legacy {
				available := r.forkable(id)
				require.False(t, available, id)
				require.Equal(t, forkengine.BindingRecoveryRequired, forkengine.TurnBindingState(r.storedTurn(id), available), id)

				_, err := r.fork("request-"+id, id)

				requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonProviderTurnMissing)
			}
			require.Zero(t, r.driver.RecoverCalls(), "without a submit proof recovery is not tried")
			require.Zero(t, r.driver.ForkCalls())
			require.Zero(t, r.operations())
			require.Len(t, r.events(), events, "nothing was written")
		},
		// 53. Given a fork of turn-7 prepared and not yet committed, when the source keeps working
		// (session reports with a new title, settings and metadata; a new turn with its submit
		// claim and messages; the same report of turn-7 again), then each write succeeds; a second
		// request on the same turn answers the same operation (the barrier: forkgraph's form of the
		// reference's InProgress); deleting the source is FORK_IN_PROGRESS; deleting the reserved
		// target is FORK_CONFLICT target_reserved; and the fork still commits.
		"Scenario53_GivenAForkInFlight_WhenTheSourceIsWritten_ThenEveryWriteSucceedsAndDeletesAreRefused": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, true, submitClaim("opaque-submit-7"))
			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)

			psid := "provider-session-1"
			_, err = r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
				Provider: scenarioProvider, ProviderSessionID: &psid, Title: strPtr("renamed"),
				Settings: json.RawMessage(`{"model":"other-model"}`), Metadata: json.RawMessage(`{"pinned":true}`)})
			require.NoError(t, err, "title, settings and metadata reports")
			r.turn("turn-7", forkengine.PhaseSettled, true, nil) // the same state report again
			r.turn("turn-8", forkengine.PhaseRunning, false, submitClaim("opaque-submit-8"))
			_, err = r.engine.AppendMessages(r.ctx, forkengine.MessageAppend{WorkspaceID: scenarioWS, SessionID: scenarioSource,
				TurnID: "turn-8", Messages: []forkengine.MessageInput{{ID: "msg-8", Role: forkengine.RoleUser, Content: "next"}}})
			require.NoError(t, err, "messages of a new turn")

			again, err := r.fork("request-2", "turn-7")
			require.NoError(t, err)
			require.Equal(t, op.ID, again.ID, "a second prepare on the same turn is the operation in flight")
			for _, purge := range []bool{false, true} {
				requireReason(t, r.engine.DeleteSession(r.ctx, scenarioWS, scenarioSource, purge), forkengine.CodeForkInProgress, "")
			}
			requireReason(t, r.engine.DeleteSession(r.ctx, scenarioWS, op.TargetSessionID, false),
				forkengine.CodeForkConflict, forkengine.ReasonTargetReserved)
			require.Equal(t, 1, r.operations())

			op = r.process(op)

			require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
			target, err := s.GetSession(r.ctx, scenarioWS, op.TargetSessionID)
			require.NoError(t, err)
			require.Equal(t, "123 (2)", target.Title, "the title was frozen at prepare")
			require.Equal(t, 1, r.driver.ForkCalls())
		},
		// 57. Given the source has work pending (a running turn with its submit claim, a pending
		// permission of that turn, and a fork of an earlier turn whose delivery is unknown and
		// waits for reconciliation), when turn-7 is forked, then prepare is not blocked and the
		// fork commits: forkgraph requires no quiescence (the reference's goal and runtime ops
		// have no counterpart here).
		"Scenario57_GivenPendingWorkOnTheSource_WhenForked_ThenQuiescenceIsNotRequired": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-6", forkengine.PhaseSettled, true, nil)
			r.driver.QueueFork(ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown, Error: "lost"}})
			unknown, err := r.fork("request-unknown", "turn-6")
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusUnknown, r.process(unknown).Status)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			r.turn("turn-8", forkengine.PhaseRunning, false, submitClaim("opaque-submit-8"))
			_, err = r.engine.ReportInteraction(r.ctx, forkengine.InteractionReport{WorkspaceID: scenarioWS, SessionID: scenarioSource,
				TurnID: "turn-8", RequestID: "perm-1", Kind: forkengine.InteractionPermission,
				Prompt: json.RawMessage(`{"command":"rm -rf build"}`), State: forkengine.InteractionPending})
			require.NoError(t, err)

			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err, "nothing pending blocks prepare")
			op = r.process(op)

			require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
			require.Equal(t, 2, r.operations())
		},
		// 55. Given a fork of turn-7 the provider is answering, when the source is changed under
		// it, then the commit uses the frozen prefix (a message added to turn-7 since is not
		// copied); and a changed source provider session id, which the reference's commit refuses
		// with SourceState, cannot happen here: the report that would change it (another id, or
		// another provider) is refused with provider_session_changed and the fork commits from
		// the provider session it froze.
		"Scenario55_GivenAForkBeingAnswered_WhenTheSourceChanges_ThenTheFrozenPrefixCommitsAndTheProviderSessionCannotChange": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			_, err := r.engine.AppendMessages(r.ctx, forkengine.MessageAppend{WorkspaceID: scenarioWS, SessionID: scenarioSource,
				TurnID: "turn-7", Messages: []forkengine.MessageInput{{ID: "msg-7", Role: forkengine.RoleUser, Content: "prompt"}}})
			require.NoError(t, err)
			var refusals []error
			r.driver.QueueFork(ForkStep{Func: func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
				for _, change := range []struct{ provider, id string }{
					{scenarioProvider, "provider-session-2"}, {"other-provider", "provider-session-1"},
				} {
					_, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
						Provider: change.provider, ProviderSessionID: &change.id})
					refusals = append(refusals, err)
				}
				_, err := r.engine.AppendMessages(r.ctx, forkengine.MessageAppend{WorkspaceID: scenarioWS, SessionID: scenarioSource,
					TurnID: "turn-7", Messages: []forkengine.MessageInput{{ID: "msg-7-late", Role: forkengine.RoleAssistant, Content: "late"}}})
				refusals = append(refusals, err)
				return AcceptedResult(req), nil
			}})
			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)

			op = r.process(op)

			require.Len(t, refusals, 3)
			requireReason(t, refusals[0], forkengine.CodeInvalid, forkengine.ReasonProviderSessionChanged)
			requireReason(t, refusals[1], forkengine.CodeInvalid, forkengine.ReasonProviderSessionChanged)
			require.NoError(t, refusals[2], "the source's transcript keeps growing")
			source, err := s.GetSession(r.ctx, scenarioWS, scenarioSource)
			require.NoError(t, err)
			require.Equal(t, "provider-session-1", source.ProviderSessionID)
			require.Equal(t, scenarioProvider, source.Provider)
			require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
			require.Equal(t, "provider-session-1", op.SourceProviderSessionID)
			msgs, err := s.MessagesByTurnIDs(r.ctx, scenarioWS, []string{op.TargetTurnID})
			require.NoError(t, err)
			require.Len(t, msgs[op.TargetTurnID], 1, "the message added after prepare is not in the child")
		},
	}
}
