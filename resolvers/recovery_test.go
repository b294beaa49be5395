package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

const reportTurnWithSubmission = `mutation($id: ID!, $sub: TurnSubmissionInput) {
	reportTurn(input: {workspaceId: "w", sessionId: "src", id: $id, phase: SETTLED, outcome: COMPLETED, submission: $sub}) {
		id providerForkBindingAvailable providerForkBindingState } }`

// TestBindingRecoveryOverGraphQL: a turn reported with its submission but without a binding is
// RECOVERY_REQUIRED; forking it recovers the binding (the simulated provider finds it by the
// submit id), and the turn reads BOUND. A bad submission is BAD_USER_INPUT and changes nothing.
func TestBindingRecoveryOverGraphQL(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: func(c *forkengine.Config) { c.NoBackground = true }})
	api.seedSession("w", "src", 1, "")
	type turnState struct {
		ID                           string
		ProviderForkBindingAvailable bool
		ProviderForkBindingState     string
	}
	var reported struct{ ReportTurn turnState }
	api.mustDo(reportTurnWithSubmission, &reported, map[string]any{"id": "src-t2",
		"sub": map[string]any{"clientSubmitId": "submit-2", "content": "MULTIMODAL"}})
	require.Equal(t, turnState{ID: "Turn:w:src-t2", ProviderForkBindingState: "RECOVERY_REQUIRED"}, reported.ReportTurn)

	var started struct{ ForkSession forkOp }
	api.mustDo(forkMutation, &started, map[string]any{"source": "src", "through": "src-t2", "req": "recover"})
	op, err := api.engine.ProcessOperation(t.Context(), "w", started.ForkSession.LocalID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
	require.EqualValues(t, 1, api.sim.RecoverCalls())

	var read struct{ Node turnState }
	api.mustDo(`query { node(id: "Turn:w:src-t2") { ... on Turn { id providerForkBindingAvailable providerForkBindingState } } }`, &read, nil)
	require.Equal(t, turnState{ID: "Turn:w:src-t2", ProviderForkBindingAvailable: true, ProviderForkBindingState: "BOUND"}, read.Node)

	for name, sub := range map[string]map[string]any{
		"plain text without text": {"content": "PLAIN_TEXT"},
		"text of multimodal":      {"content": "MULTIMODAL", "text": "hello"},
		"submit id with a NUL":    {"clientSubmitId": "a\x00b", "content": "MULTIMODAL"},
	} {
		e := api.expectCode("BAD_USER_INPUT", reportTurnWithSubmission, map[string]any{"id": "src-t3", "sub": sub})
		_, err := api.engine.Reader().GetTurn(t.Context(), "w", "src-t3")
		require.ErrorIs(t, err, forkengine.ErrNotFound, "%s: the refused report wrote nothing (%v)", name, e)
	}
	e := api.expectCode("BAD_USER_INPUT", reportTurnWithSubmission, map[string]any{"id": "src-t2",
		"sub": map[string]any{"clientSubmitId": "submit-other", "content": "MULTIMODAL"}})
	require.Equal(t, forkengine.ReasonSubmissionChanged, e.Extensions["reason"])
}

// TestIngestBindingRulesOverGraphQL: the refusals reach clients with their reasons.
func TestIngestBindingRulesOverGraphQL(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: func(c *forkengine.Config) { c.NoBackground = true }})
	api.seedSession("w", "src", 2, "")
	api.seedTurn("w", "src", "src-running", forkengine.PhaseRunning) // bound to p-src-running, not settled
	e := api.expectCode("BAD_USER_INPUT", `mutation { reportTurn(input: {workspaceId: "w", sessionId: "src", id: "src-running",
		phase: RUNNING, providerTurnId: "p-other"}) { id } }`, nil)
	require.Equal(t, forkengine.ReasonProviderBindingChanged, e.Extensions["reason"])
	e = api.expectCode("BAD_USER_INPUT", `mutation { reportTurn(input: {workspaceId: "w", sessionId: "src", id: "src-t3",
		phase: RUNNING, providerTurnId: "p-src-t1"}) { id } }`, nil)
	require.Equal(t, forkengine.ReasonProviderTurnDuplicate, e.Extensions["reason"])
	e = api.expectCode("BAD_USER_INPUT", `mutation { reportTurn(input: {workspaceId: "w", sessionId: "src", id: "src-t1",
		phase: SETTLED, outcome: COMPLETED, providerTurnId: "p-other"}) { id } }`, nil)
	require.Equal(t, forkengine.ReasonTurnSettled, e.Extensions["reason"], "a settled turn never changes at all")
	e = api.expectCode("BAD_USER_INPUT", `mutation { reportSession(input: {workspaceId: "w", id: "src", provider: "simulated",
		providerSessionId: "p-elsewhere"}) { id } }`, nil)
	require.Equal(t, forkengine.ReasonProviderSessionChanged, e.Extensions["reason"])
	s, err := api.engine.Reader().GetSession(t.Context(), "w", "src")
	require.NoError(t, err)
	require.Equal(t, "p-src", s.ProviderSessionID)
}
