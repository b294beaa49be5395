package forkenginetest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// runtimeContextTests: a session's runtime context (reference §1.1, the internal
// runtimeContext) is reported, kept by a report that omits it, refused unless it is a JSON
// object, and a fork's child gets the prepared one (§5.5, scenarios 11, 12): the request's
// prepared context when it gave one, else its source's as frozen at prepare, kept whole.
func runtimeContextTests() map[string]storeTest {
	const worktree = `{"isolation":{"mode":"worktree","worktreeId":"worktree-1"},"runtimeSnapshotVersion":3}`
	return map[string]storeTest{
		"GivenAReportedRuntimeContext_WhenReportedAgainWithoutIt_ThenKept": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			require.Nil(t, r.stored().RuntimeContext, "a session reported without one has none")
			r.reportRuntimeContext(` { "b": 1, "a": {"x": "&<>"} } `)
			require.JSONEq(t, `{"a":{"x":"&<>"},"b":1}`, string(r.stored().RuntimeContext))
			r.targetSource(`{}`) // omits it
			require.JSONEq(t, `{"a":{"x":"&<>"},"b":1}`, string(r.stored().RuntimeContext))
		},
		"GivenARuntimeContextThatIsNoObject_WhenReported_ThenRefusedAndNothingChanged": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.reportRuntimeContext(`{"a":1}`)
			before := r.stored()
			for _, bad := range []string{`[1]`, `"worktree"`, `3`, `{"a":`, `null x`} {
				_, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
					Provider: scenarioProvider, Title: strPtr("changed"), RuntimeContext: json.RawMessage(bad)})
				require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err), "%s: %v", bad, err)
				require.Equal(t, before, r.stored(), bad)
			}
		},
		// 11. Given a source whose runtime context has worktree isolation (worktree-1) and a
		// prepared cwd /tmp/source-worktree with no prepared context, when forked, then the child's
		// cwd is the prepared one and its runtime context the source's, worktree facts preserved.
		"Scenario11_GivenASourceInAWorktree_WhenForkedWithAPreparedCwd_ThenTheChildKeepsTheWorktreeFacts": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.reportRuntimeContext(worktree)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/tmp/source-worktree")})
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			child := r.child(op)
			require.Equal(t, "/tmp/source-worktree", child.Cwd)
			require.JSONEq(t, worktree, string(child.RuntimeContext))
			require.JSONEq(t, worktree, string(r.driver.ForkRequests()[0].Target.PreparedContext), "the driver prepares the same")
		},
		// 12. Given a source context and a prepared context with snapshot and title facts, when
		// forked, then the child has the prepared context, whole, and the source keeps its own.
		"Scenario12_GivenPreparedFacts_WhenForked_ThenTheChildHasThePreparedContext": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.reportRuntimeContext(worktree)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			prepared := `{"runtimeSnapshotVersion":2,"titleEstablished":true}`
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/prepared-project"),
				PreparedContext: json.RawMessage(prepared)})
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			require.JSONEq(t, prepared, string(r.child(op).RuntimeContext))
			require.JSONEq(t, worktree, string(r.stored().RuntimeContext))
		},
		"GivenNoTarget_WhenForked_ThenTheChildHasTheSourceContextAsFrozen": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.reportRuntimeContext(worktree)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", nil)
			require.NoError(t, err)
			r.reportRuntimeContext(`{"isolation":{"mode":"worktree","worktreeId":"worktree-2"}}`) // after prepare
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			require.JSONEq(t, worktree, string(r.child(op).RuntimeContext), "frozen at prepare")
		},
		"GivenASourceWithoutContext_WhenForked_ThenTheChildHasNone": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/x")})
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			require.Nil(t, r.child(op).RuntimeContext)
		},
	}
}

// reportRuntimeContext reports the scenario's source with runtime context rc.
func (r *scenarioRig) reportRuntimeContext(rc string) {
	r.t.Helper()
	_, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
		Provider: scenarioProvider, RuntimeContext: json.RawMessage(rc)})
	require.NoError(r.t, err)
}
