package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/models"
)

func TestReportAndRead(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})

	var s struct {
		ReportSession struct {
			ID, LocalID, Kind, Title string
			Settings                 map[string]any
			Visible                  bool
		}
	}
	api.mustDo(`mutation { reportSession(input: {workspaceId: "w", id: "s1", provider: "simulated",
		providerSessionId: "p-s1", title: "First", settings: {color: "blue"}, visible: true}) {
		id localId kind title settings visible } }`, &s, nil)
	require.Equal(t, sessionGID("w", "s1"), s.ReportSession.ID)
	require.Equal(t, "s1", s.ReportSession.LocalID)
	require.Equal(t, "ROOT", s.ReportSession.Kind)
	require.Equal(t, map[string]any{"color": "blue"}, s.ReportSession.Settings)

	for _, turn := range []string{"t1", "t2"} {
		var tr struct {
			ReportTurn struct {
				ID, Phase string
				Outcome   *string
				Sequence  int
			}
		}
		api.mustDo(`mutation($id: ID!, $pt: String!) { reportTurn(input: {workspaceId: "w", sessionId: "s1", id: $id,
			phase: SETTLED, outcome: COMPLETED, providerTurnId: $pt, providerTurnBinding: {h: 1}}) {
			id phase outcome sequence } }`, &tr, map[string]any{"id": turn, "pt": "p-" + turn})
		require.Equal(t, "SETTLED", tr.ReportTurn.Phase)
		require.Equal(t, "COMPLETED", *tr.ReportTurn.Outcome)
	}
	var running struct {
		ReportTurn struct {
			Phase   string
			Outcome *string
		}
	}
	api.mustDo(`mutation { reportTurn(input: {workspaceId: "w", sessionId: "s1", id: "t3", phase: RUNNING}) {
		phase outcome } }`, &running, nil)
	require.Equal(t, "RUNNING", running.ReportTurn.Phase)
	require.Nil(t, running.ReportTurn.Outcome)

	var msgs struct {
		AppendMessages []struct{ ID, LocalID, Role, Content, TurnID, SessionID string }
	}
	api.mustDo(`mutation { appendMessages(input: {workspaceId: "w", sessionId: "s1", turnId: "t1", messages: [
		{id: "m1", role: USER, content: "hi"}, {role: ASSISTANT, content: "hello"}]}) {
		id localId role content turnId sessionId } }`, &msgs, nil)
	require.Len(t, msgs.AppendMessages, 2)
	require.Equal(t, models.GlobalID(models.NodeMessage, "w", "m1"), msgs.AppendMessages[0].ID)
	require.Equal(t, "m1", msgs.AppendMessages[0].LocalID)
	require.NotEmpty(t, msgs.AppendMessages[1].LocalID)
	require.Equal(t, models.GlobalID(models.NodeMessage, "w", msgs.AppendMessages[1].LocalID), msgs.AppendMessages[1].ID)
	require.Equal(t, "t1", msgs.AppendMessages[0].TurnID, "relation ids stay local")
	require.Equal(t, "ASSISTANT", msgs.AppendMessages[1].Role)

	var read struct {
		Session struct {
			ID, Provider      string
			ProviderSessionID string
			Turns             struct {
				Edges []struct {
					Cursor string
					Node   struct {
						LocalID  string
						Sequence int
					}
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
				TotalCount int
			}
			LatestTurn            struct{ LocalID string }
			ActiveTurn            struct{ ID, Phase string }
			Messages              []struct{ Content string }
			LifecycleCapabilities struct{ Fork, ForkThroughTurn bool }
			ForkedFrom            *struct{ OperationID string }
			Forks                 []struct{ OperationID string }
		}
	}
	api.mustDo(`{ session(workspaceId: "w", id: "s1") { id provider providerSessionId
		turns(first: 2) { edges { cursor node { localId sequence } } pageInfo { hasNextPage endCursor } totalCount }
		latestTurn { localId } activeTurn { id phase } messages { content }
		lifecycleCapabilities { fork forkThroughTurn } forkedFrom { operationId } forks { operationId } } }`, &read, nil)
	got := read.Session
	require.Equal(t, "p-s1", got.ProviderSessionID)
	require.Len(t, got.Turns.Edges, 2)
	require.Equal(t, []string{"t1", "t2"}, []string{got.Turns.Edges[0].Node.LocalID, got.Turns.Edges[1].Node.LocalID})
	require.True(t, got.Turns.PageInfo.HasNextPage)
	require.Equal(t, 3, got.Turns.TotalCount)
	require.Equal(t, "t3", got.LatestTurn.LocalID)
	require.Equal(t, "RUNNING", got.ActiveTurn.Phase)
	require.Equal(t, []struct{ Content string }{{"hi"}, {"hello"}}, got.Messages)
	require.Equal(t, struct{ Fork, ForkThroughTurn bool }{false, true}, got.LifecycleCapabilities)
	require.Nil(t, got.ForkedFrom)
	require.Empty(t, got.Forks)

	var next struct {
		Session struct {
			Turns struct {
				Edges    []struct{ Node struct{ LocalID string } }
				PageInfo struct{ HasNextPage bool }
			}
		}
	}
	api.mustDo(`query($after: String) { session(workspaceId: "w", id: "s1") { turns(first: 2, after: $after) {
		edges { node { localId } } pageInfo { hasNextPage } } } }`, &next, map[string]any{"after": got.Turns.PageInfo.EndCursor})
	require.Len(t, next.Session.Turns.Edges, 1)
	require.Equal(t, "t3", next.Session.Turns.Edges[0].Node.LocalID)
	require.False(t, next.Session.Turns.PageInfo.HasNextPage)

	var missing struct{ Session *struct{ ID string } }
	api.mustDo(`{ session(workspaceId: "w", id: "nope") { id } }`, &missing, nil)
	require.Nil(t, missing.Session)
}

func TestSessionsPagination(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		api.seedSession("w", id, 0, "")
	}
	api.seedSession("other", "x", 0, "")
	type page struct {
		Sessions struct {
			Edges    []struct{ Node struct{ LocalID string } }
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
			TotalCount int
		}
	}
	var ids []string
	var after *string
	for {
		var p page
		api.mustDo(`query($after: String) { sessions(workspaceId: "w", first: 2, after: $after) {
			edges { node { localId } } pageInfo { hasNextPage endCursor } totalCount } }`, &p, map[string]any{"after": after})
		require.Equal(t, 5, p.Sessions.TotalCount)
		for _, e := range p.Sessions.Edges {
			ids = append(ids, e.Node.LocalID)
		}
		if !p.Sessions.PageInfo.HasNextPage {
			break
		}
		after = p.Sessions.PageInfo.EndCursor
	}
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, ids)

	_, err := api.engine.ReportSession(t.Context(), reportHidden("w", "c"))
	require.NoError(t, err)
	var visible page
	api.mustDo(`{ sessions(workspaceId: "w", filter: {visible: true}) { edges { node { localId } } totalCount } }`, &visible, nil)
	require.Equal(t, 4, visible.Sessions.TotalCount)

	var deleted struct{ DeleteSession bool }
	api.mustDo(`mutation { deleteSession(workspaceId: "w", id: "e") }`, &deleted, nil)
	require.True(t, deleted.DeleteSession)
	var live, all page
	api.mustDo(`{ sessions(workspaceId: "w") { totalCount } }`, &live, nil)
	api.mustDo(`{ sessions(workspaceId: "w", filter: {includeDeleted: true}) { totalCount } }`, &all, nil)
	require.Equal(t, 4, live.Sessions.TotalCount)
	require.Equal(t, 5, all.Sessions.TotalCount)
}
