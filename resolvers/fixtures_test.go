package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// seedSession reports, through the engine, a root simulated session with n settled, bound turns
// (ids <id>-t1..), each with a user and an assistant message. settings may be "".
func (a *testAPI) seedSession(ws, id string, n int, settings string) {
	a.t.Helper()
	ctx := context.Background()
	psid, title := fixtureProviderSession(ws, id), "Title of "+id
	report := forkengine.SessionReport{WorkspaceID: ws, ID: id, Provider: "simulated", ProviderSessionID: &psid, Title: &title}
	if settings != "" {
		report.Settings = json.RawMessage(settings)
	}
	_, err := a.engine.ReportSession(ctx, report)
	require.NoError(a.t, err)
	for i := 1; i <= n; i++ {
		a.seedTurn(ws, id, fmt.Sprintf("%s-t%d", id, i), forkengine.PhaseSettled)
	}
}

// fixtureProviderSession is the provider session of fixture session id: "p-<id>" in workspace
// "w", "p-<ws>-<id>" in any other, since a provider session belongs to one workspace (the first
// to report it) and tests report the same session id in several.
func fixtureProviderSession(ws, id string) string {
	if ws == "w" {
		return "p-" + id
	}
	return "p-" + ws + "-" + id
}

// seedTurn reports a bound turn in the given phase, with two messages.
func (a *testAPI) seedTurn(ws, sessionID, turnID string, phase forkengine.TurnPhase) {
	a.t.Helper()
	ctx := context.Background()
	ptid := "p-" + turnID
	report := forkengine.TurnReport{WorkspaceID: ws, SessionID: sessionID, ID: turnID, Phase: phase,
		ProviderTurnID: &ptid, ProviderTurnBinding: json.RawMessage(`{"handle":"` + ptid + `"}`)}
	if phase == forkengine.PhaseSettled {
		report.Outcome = forkengine.OutcomeCompleted
	}
	_, err := a.engine.ReportTurn(ctx, report)
	require.NoError(a.t, err)
	_, err = a.engine.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: ws, SessionID: sessionID, TurnID: turnID,
		Messages: []forkengine.MessageInput{
			{ID: turnID + "-u", Role: forkengine.RoleUser, Content: "question " + turnID},
			{ID: turnID + "-a", Role: forkengine.RoleAssistant, Content: "answer " + turnID},
		}})
	require.NoError(a.t, err)
}

// forkAndCommit forks a session through a turn and drives it to its end synchronously (for
// engines built with NoBackground), returning the operation id.
func (a *testAPI) forkAndCommit(ws, source, through, requestID string) string {
	a.t.Helper()
	ctx := context.Background()
	op, err := a.engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source,
		ThroughTurnID: through, RequestID: requestID})
	require.NoError(a.t, err)
	op, err = a.engine.ProcessOperation(ctx, ws, op.ID)
	require.NoError(a.t, err)
	require.Equal(a.t, forkengine.StatusCommitted, op.Status)
	return op.ID
}

func noBackground(c *forkengine.Config) { c.NoBackground = true }

// reportHidden hides a session.
func reportHidden(ws, id string) forkengine.SessionReport {
	hidden := false
	return forkengine.SessionReport{WorkspaceID: ws, ID: id, Provider: "simulated", Visible: &hidden}
}

// The global ids the API shows for objects the tests name by their local ids.
func sessionGID(ws, id string) string { return models.GlobalID(models.NodeSession, ws, id) }
func turnGID(ws, id string) string    { return models.GlobalID(models.NodeTurn, ws, id) }
func opGID(ws, id string) string      { return models.GlobalID(models.NodeForkOperation, ws, id) }
