package forkenginetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// targetTests: the target settings and context of a fork (reference §5.5, §1.1, scenarios 11,
// 12, 38 and 43's target half): the overlay over a copy of the source's settings, the model rule,
// the prepared cwd and runtime context, frozen at prepare, part of the request's identity, sent
// to the driver and given to the committed child; the environment and provider target ref reach
// the dispatch only.
func targetTests() map[string]storeTest {
	return map[string]storeTest{
		// 11. Given a prepared runtime context with worktree isolation (worktreeId worktree-1) and a
		// prepared cwd /tmp/source-worktree, when the fork's target is prepared, then there is no
		// error, the cwd is /tmp/source-worktree and the isolation still carries worktree-1: in the
		// operation as stored, in the driver's request and on the committed child.
		"Scenario11_ContextPolicyPreservesWorktreeFacts": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{"model":"gpt-a"}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			rc := `{"isolation":{"mode":"worktree","worktreeId":"worktree-1"},"runtimeSnapshotVersion":3}`
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{
				Cwd: strPtr(" /tmp/source-worktree "), PreparedContext: json.RawMessage(rc)})
			require.NoError(t, err)
			stored, err := s.GetOperation(r.ctx, scenarioWS, op.ID)
			require.NoError(t, err)
			require.NotNil(t, stored.Target)
			require.Equal(t, "/tmp/source-worktree", stored.Target.Cwd)
			require.JSONEq(t, rc, string(stored.Target.PreparedContext))
			committed := r.process(op)
			require.Equal(t, forkengine.StatusCommitted, committed.Status)
			sent := r.driver.ForkRequests()[0].Target
			require.Equal(t, "/tmp/source-worktree", sent.Cwd)
			var facts struct {
				Isolation struct{ Mode, WorktreeID string } `json:"isolation"`
			}
			require.NoError(t, json.Unmarshal(sent.PreparedContext, &facts))
			require.Equal(t, "worktree", facts.Isolation.Mode)
			require.Equal(t, "worktree-1", facts.Isolation.WorktreeID)
			require.Equal(t, "/tmp/source-worktree", r.child(op).Cwd)
		},
		// 12. Given a source cwd /project and a prepared cwd /prepared-project with snapshot and
		// title facts, when the fork is prepared, then the target's cwd is /prepared-project and
		// both facts are present; nothing but the request is needed to prepare it.
		"Scenario12_ContextPolicyUsesPreparedFacts": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/prepared-project"),
				PreparedContext: json.RawMessage(`{"runtimeSnapshotVersion":2,"titleEstablished":true}`)})
			require.NoError(t, err)
			r.process(op)
			child := r.child(op)
			require.Equal(t, "/prepared-project", child.Cwd)
			got, err := r.engine.Operation(r.ctx, scenarioWS, op.ID)
			require.NoError(t, err)
			require.JSONEq(t, `{"runtimeSnapshotVersion":2,"titleEstablished":true}`, string(got.Target.PreparedContext))
		},
		// 38. Given a historical source, when it is forked with prepared values, then the one
		// prepared identity is used throughout: the driver's request carries the frozen target,
		// what the driver does to its copy never reaches the operation, and the child's cwd,
		// settings and model are the frozen ones.
		"Scenario38_OnePreparedIdentity": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{"model":"gpt-a","speed":"normal"}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			r.driver.QueueFork(ForkStep{Func: func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
				for i := range req.Target.Settings {
					req.Target.Settings[i] = ' ' // the adapter scribbles on its copy
				}
				req.Source.Settings[1] = 'X'
				return AcceptedResult(req), nil
			}})
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/prepared"),
				Settings: &forkengine.SettingsOverlay{Model: strPtr("gpt-b")}})
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			child := r.child(op)
			require.Equal(t, "/prepared", child.Cwd)
			require.Equal(t, "gpt-b", child.Model)
			require.JSONEq(t, `{"model":"gpt-b","speed":"normal"}`, string(child.Settings))
			got, err := r.engine.Operation(r.ctx, scenarioWS, op.ID)
			require.NoError(t, err)
			require.JSONEq(t, `{"model":"gpt-b","speed":"normal"}`, string(got.Target.Settings))
			require.Equal(t, 1, r.driver.ForkCalls())
		},
		// 43 (target half). Given S with cwd /project and model gpt-a, when it is forked with a
		// prepared cwd and another model and committed, then the child is root with the provider's
		// child, title "123 (2)", the prepared cwd and model; the source is unchanged.
		"Scenario43_ChildHasThePreparedCwdAndModel": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{"model":"gpt-a"}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/prepared-project"),
				Settings: &forkengine.SettingsOverlay{Model: strPtr("gpt-b")}})
			require.NoError(t, err)
			r.process(op)
			child := r.child(op)
			require.Equal(t, forkengine.SessionRoot, child.Kind)
			require.Equal(t, "child-"+op.ID, child.ProviderSessionID)
			require.Equal(t, "123 (2)", child.Title)
			require.Equal(t, "/prepared-project", child.Cwd)
			require.Equal(t, "gpt-b", child.Model)
			source, err := s.GetSession(r.ctx, scenarioWS, scenarioSource)
			require.NoError(t, err)
			require.Equal(t, "/project", source.Cwd)
			require.Equal(t, "gpt-a", source.Model)
			require.JSONEq(t, `{"model":"gpt-a"}`, string(source.Settings))
		},
		// The overlay over a copy of the source's settings, exactly as the reference writes it:
		// the seven values written when given (the others kept), browserUse and computerUse set
		// when given and removed when not, every other key kept; the model is settings.model.
		"OverlayGivesTheChildTheReferenceSettingsAndModel": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{"model":"gpt-a","modelPlanId":"plan-1","planMode":false,"speed":"fast",` +
				`"browserUse":{"enabled":true},"computerUse":true,"custom":{"kept":[1,2]}}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			planMode := true
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Settings: &forkengine.SettingsOverlay{
				Model: strPtr("gpt-b"), PermissionModeID: strPtr("ask"), PlanMode: &planMode,
				ReasoningEffort: strPtr("high"), ConversationDetailMode: strPtr("compact"),
				ComputerUse: json.RawMessage(`{ "display": 1 }`),
			}})
			require.NoError(t, err)
			r.process(op)
			want := `{"model":"gpt-b","modelPlanId":"plan-1","permissionModeId":"ask","planMode":true,` +
				`"reasoningEffort":"high","speed":"fast","conversationDetailMode":"compact",` +
				`"computerUse":{"display":1},"custom":{"kept":[1,2]}}`
			child := r.child(op)
			require.JSONEq(t, want, string(child.Settings))
			require.Equal(t, "gpt-b", child.Model)
			require.Equal(t, "/project", child.Cwd, "no prepared cwd: the source's")
			require.JSONEq(t, want, string(r.driver.ForkRequests()[0].Target.Settings))
		},
		// The model is settings.model only when that is a string; otherwise the source's model.
		"ModelIsTheSourcesWhenSettingsModelIsNotAString": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{"model":{"id":"object-model"}}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{
				Settings: &forkengine.SettingsOverlay{Speed: strPtr("fast")}})
			require.NoError(t, err)
			r.process(op)
			child := r.child(op)
			require.Equal(t, "gpt-a", child.Model)
			require.JSONEq(t, `{"model":{"id":"object-model"},"speed":"fast"}`, string(child.Settings))
		},
		// A fork without a target copies the source's settings, model and cwd as they are, as
		// forks did before targets existed, and its request hash is what it was then.
		"NoTargetCopiesTheSource": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{"model":"gpt-b","browserUse":true}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{
				Environment: []forkengine.EnvironmentVariable{{Name: "ONLY_DISPATCH", Value: "x"}}})
			require.NoError(t, err)
			require.Nil(t, op.Target, "dispatch-only values freeze nothing")
			r.process(op)
			child := r.child(op)
			require.Equal(t, "gpt-a", child.Model)
			require.Equal(t, "/project", child.Cwd)
			require.JSONEq(t, `{"model":"gpt-b","browserUse":true}`, string(child.Settings))
			plain, err := r.fork("request-1", "turn-7")
			require.NoError(t, err, "the same identity as a request without any target")
			require.Equal(t, op.ID, plain.ID)
		},
		// A replay of a request id with another overlay or context is request_conflict, and makes
		// nothing; one with the same values spelled otherwise (spacing, key order, other
		// dispatch-only values) is the same request and gets its operation back.
		"ReplayWithAnotherOverlayIsRequestConflict": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			first, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/a"),
				PreparedContext: json.RawMessage(`{"a":1,"b":2}`),
				Settings:        &forkengine.SettingsOverlay{Model: strPtr("gpt-b"), BrowserUse: json.RawMessage(`{"x":1,"y":2}`)}})
			require.NoError(t, err)
			ops := r.operations()
			for name, other := range map[string]*forkengine.TargetInput{
				"no target":           nil,
				"another model":       {Cwd: strPtr("/a"), PreparedContext: json.RawMessage(`{"a":1,"b":2}`), Settings: &forkengine.SettingsOverlay{Model: strPtr("gpt-c"), BrowserUse: json.RawMessage(`{"x":1,"y":2}`)}},
				"browserUse removed":  {Cwd: strPtr("/a"), PreparedContext: json.RawMessage(`{"a":1,"b":2}`), Settings: &forkengine.SettingsOverlay{Model: strPtr("gpt-b")}},
				"another cwd":         {Cwd: strPtr("/b"), PreparedContext: json.RawMessage(`{"a":1,"b":2}`), Settings: &forkengine.SettingsOverlay{Model: strPtr("gpt-b"), BrowserUse: json.RawMessage(`{"x":1,"y":2}`)}},
				"another context":     {Cwd: strPtr("/a"), PreparedContext: json.RawMessage(`{"a":1}`), Settings: &forkengine.SettingsOverlay{Model: strPtr("gpt-b"), BrowserUse: json.RawMessage(`{"x":1,"y":2}`)}},
				"settings without it": {Cwd: strPtr("/a"), PreparedContext: json.RawMessage(`{"a":1,"b":2}`)},
			} {
				_, err := r.forkWith("request-1", "turn-7", other)
				requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonRequestConflict)
				require.Equal(t, ops, r.operations(), name)
			}
			same, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr(" /a\n"),
				PreparedContext: json.RawMessage(`{ "b": 2, "a": 1 }`),
				Settings:        &forkengine.SettingsOverlay{Model: strPtr("gpt-b"), BrowserUse: json.RawMessage(`{"y":2,"x":1}`)},
				Environment:     []forkengine.EnvironmentVariable{{Name: "TOKEN", Value: "another"}}, ProviderTargetRef: "elsewhere"})
			require.NoError(t, err)
			require.Equal(t, first.ID, same.ID)
			require.Equal(t, ops, r.operations())
		},
		// Bad target values are BAD_USER_INPUT with a stable reason, and change nothing: no
		// operation, no session, no event, no driver call.
		"InvalidTargetIsRefusedAndChangesNothing": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.targetSource(`{}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			sessions, err := s.CountSessions(r.ctx, scenarioWS, forkengine.SessionFilter{})
			require.NoError(t, err)
			events, calls := len(r.events()), r.driverCalls()
			big := make([]byte, forkengine.MaxJSONBytes)
			for i := range big {
				big[i] = ' '
			}
			big[0], big[len(big)-1] = '{', '}'
			cases := map[string]struct {
				target *forkengine.TargetInput
				reason string
			}{
				"empty model":           {&forkengine.TargetInput{Settings: &forkengine.SettingsOverlay{Model: strPtr("")}}, forkengine.ReasonInvalidID},
				"control in model":      {&forkengine.TargetInput{Settings: &forkengine.SettingsOverlay{Model: strPtr("gpt\x1b[31m")}}, forkengine.ReasonInvalidID},
				"spaced speed":          {&forkengine.TargetInput{Settings: &forkengine.SettingsOverlay{Speed: strPtr(" fast")}}, forkengine.ReasonInvalidID},
				"browserUse not JSON":   {&forkengine.TargetInput{Settings: &forkengine.SettingsOverlay{BrowserUse: json.RawMessage(`{`)}}, forkengine.ReasonInvalidTarget},
				"computerUse two":       {&forkengine.TargetInput{Settings: &forkengine.SettingsOverlay{ComputerUse: json.RawMessage(`1 2`)}}, forkengine.ReasonInvalidTarget},
				"NUL in cwd":            {&forkengine.TargetInput{Cwd: strPtr("/a\x00b")}, forkengine.ReasonInvalidText},
				"cwd too long":          {&forkengine.TargetInput{Cwd: strPtr("/" + strings.Repeat("a", forkengine.MaxTextLength))}, forkengine.ReasonInvalidTarget},
				"context trailing":      {&forkengine.TargetInput{PreparedContext: json.RawMessage(`{"a":1} }`)}, forkengine.ReasonInvalidTarget},
				"context not an object": {&forkengine.TargetInput{PreparedContext: json.RawMessage(`[1]`)}, forkengine.ReasonInvalidTarget},
				"context too large":     {&forkengine.TargetInput{PreparedContext: json.RawMessage(append(big, ' '))}, forkengine.ReasonInvalidTarget},
				"env name":              {&forkengine.TargetInput{Environment: []forkengine.EnvironmentVariable{{Name: "1X", Value: "v"}}}, forkengine.ReasonInvalidTarget},
				"env twice":             {&forkengine.TargetInput{Environment: []forkengine.EnvironmentVariable{{Name: "X", Value: "1"}, {Name: "X", Value: "2"}}}, forkengine.ReasonInvalidTarget},
				"env NUL":               {&forkengine.TargetInput{Environment: []forkengine.EnvironmentVariable{{Name: "X", Value: "a\x00"}}}, forkengine.ReasonInvalidTarget},
				"target ref":            {&forkengine.TargetInput{ProviderTargetRef: "ref\n"}, forkengine.ReasonInvalidID},
				"settings grow too big": {&forkengine.TargetInput{Settings: &forkengine.SettingsOverlay{BrowserUse: json.RawMessage(`"` + string(big[2:]) + `"`)}}, forkengine.ReasonInvalidTarget},
			}
			for name, c := range cases {
				_, err := r.forkWith("request-"+name, "turn-7", c.target)
				require.Error(t, err, name)
				require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err), "%s: %v", name, err)
				require.Equal(t, c.reason, forkengine.ErrorReason(err), "%s: %v", name, err)
			}
			require.Zero(t, r.operations())
			after, err := s.CountSessions(r.ctx, scenarioWS, forkengine.SessionFilter{})
			require.NoError(t, err)
			require.Equal(t, sessions, after)
			require.Equal(t, events, len(r.events()))
			require.Equal(t, calls, r.driverCalls())
		},
		// The environment and the provider target ref reach the Fork call the start made, and
		// nothing that is kept: not the operation, not a recovery's dispatch.
		"EnvironmentReachesTheDispatchOnly": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s, func(c *forkengine.Config) { c.NoBackground = false })
			r.targetSource(`{}`)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			env := []forkengine.EnvironmentVariable{{Name: "API_TOKEN", Value: "secret-marker"}}
			op, err := r.forkWith("request-1", "turn-7", &forkengine.TargetInput{Cwd: strPtr("/w"),
				Environment: env, ProviderTargetRef: "target-ref-marker"})
			require.NoError(t, err)
			require.NoError(t, r.engine.Close(r.ctx), "waits for the background dispatch")
			reqs := r.driver.ForkRequests()
			require.Len(t, reqs, 1)
			require.Equal(t, env, reqs[0].Environment)
			require.Equal(t, "target-ref-marker", reqs[0].ProviderTargetRef)
			stored, err := s.GetOperation(r.ctx, scenarioWS, op.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, stored.Status)
			encoded, err := json.Marshal(stored)
			require.NoError(t, err)
			require.NotContains(t, string(encoded), "secret-marker")
			require.NotContains(t, string(encoded), "target-ref-marker")
		},
	}
}

// targetSource reports S with cwd /project, model gpt-a and the given settings.
func (r *scenarioRig) targetSource(settings string) {
	r.t.Helper()
	psid := "provider-session-1"
	_, err := r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: scenarioWS, ID: scenarioSource,
		Provider: scenarioProvider, ProviderSessionID: &psid, Title: strPtr("123"), Cwd: strPtr("/project"),
		Model: strPtr("gpt-a"), Settings: json.RawMessage(settings)})
	require.NoError(r.t, err)
}

func (r *scenarioRig) forkWith(requestID, turnID string, target *forkengine.TargetInput) (forkengine.ForkOperation, error) {
	return r.engine.StartFork(r.ctx, forkengine.ForkInput{WorkspaceID: scenarioWS, SourceSessionID: scenarioSource,
		ThroughTurnID: turnID, RequestID: requestID, Target: target})
}

// child is op's committed target session as stored.
func (r *scenarioRig) child(op forkengine.ForkOperation) forkengine.Session {
	r.t.Helper()
	s, err := r.store.GetSession(r.ctx, scenarioWS, op.TargetSessionID)
	require.NoError(r.t, err)
	return s
}
