package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

const reportInteraction = `mutation($s: ID!, $t: ID!, $r: ID!, $state: InteractionState!, $answer: JSON) {
  reportInteraction(input: {workspaceId: "w", sessionId: $s, turnId: $t, requestId: $r, kind: PERMISSION,
    prompt: {tool: "shell", command: "make deploy"}, state: $state, answer: $answer}) {
    id localId requestId turnId sessionId kind prompt state answer answeredAt
  }
}`

type interactionView struct {
	ID, LocalID, RequestID, TurnID, SessionID, Kind, State string
	Prompt, Answer                                         json.RawMessage
	AnsweredAt                                             *string
}

func (a *testAPI) interaction(session, turn, request string) {
	a.t.Helper()
	_, err := a.engine.ReportInteraction(context.Background(), forkengine.InteractionReport{WorkspaceID: "w", SessionID: session,
		TurnID: turn, RequestID: request, Kind: forkengine.InteractionQuestion, Prompt: json.RawMessage(`{"q":"` + request + `"}`),
		State: forkengine.InteractionPending})
	require.NoError(a.t, err)
}

func TestReportInteractionAndRead(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 2, "")
	var out struct{ ReportInteraction interactionView }
	api.mustDo(reportInteraction, &out, map[string]any{"s": "src", "t": "src-t2", "r": "req-1", "state": "PENDING"})
	got := out.ReportInteraction
	require.Equal(t, "PERMISSION", got.Kind)
	require.Equal(t, "PENDING", got.State)
	require.JSONEq(t, `{"tool":"shell","command":"make deploy"}`, string(got.Prompt))
	require.Equal(t, "null", string(got.Answer))

	api.mustDo(reportInteraction, &out, map[string]any{"s": "src", "t": "src-t2", "r": "req-1", "state": "ANSWERED",
		"answer": map[string]any{"allow": true}})
	require.Equal(t, got.LocalID, out.ReportInteraction.LocalID)
	require.Equal(t, "ANSWERED", out.ReportInteraction.State)
	require.NotNil(t, out.ReportInteraction.AnsweredAt)

	var node struct {
		Node struct {
			State  string
			Answer json.RawMessage
		}
	}
	api.mustDo(`query($id: ID!) { node(id: $id) { ... on Interaction { state answer } } }`, &node, map[string]any{"id": got.ID})
	require.Equal(t, "ANSWERED", node.Node.State)
	require.JSONEq(t, `{"allow":true}`, string(node.Node.Answer))

	var turn struct {
		Session struct {
			LatestTurn struct{ Interactions []interactionView }
		}
	}
	api.mustDo(`{ session(workspaceId: "w", id: "src") { latestTurn { interactions { localId requestId state } } } }`, &turn, nil)
	require.Len(t, turn.Session.LatestTurn.Interactions, 1)
	require.Equal(t, "req-1", turn.Session.LatestTurn.Interactions[0].RequestID)

	// A refusal: a settled interaction cannot change, and nothing is written.
	before := api.db.Statements()
	e := api.expectCode("BAD_USER_INPUT", reportInteraction, map[string]any{"s": "src", "t": "src-t2", "r": "req-1", "state": "CANCELED"})
	require.Equal(t, forkengine.ReasonInteractionSettled, e.Extensions["reason"])
	require.Greater(t, api.db.Statements(), before)
	api.mustDo(`query($id: ID!) { node(id: $id) { ... on Interaction { state answer } } }`, &node, map[string]any{"id": got.ID})
	require.Equal(t, "ANSWERED", node.Node.State)
	api.expectCode("NOT_FOUND", reportInteraction, map[string]any{"s": "src", "t": "nope", "r": "req-2", "state": "PENDING"})
}

func TestInteractionsOfAForkedChild(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 2, "")
	api.interaction("src", "src-t1", "ask")
	opID := api.forkAndCommit("w", "src", "src-t2", "req-fork")
	op, err := api.engine.Reader().GetOperation(context.Background(), "w", opID)
	require.NoError(t, err)
	target := op.TargetSessionID
	var out struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct {
						LocalID      string
						Interactions []interactionView
					}
				}
			}
		}
	}
	api.mustDo(`query($id: ID!) { session(workspaceId: "w", id: $id) { turns { edges { node { localId
		interactions { localId requestId turnId sessionId state } } } } } }`, &out, map[string]any{"id": target})
	edges := out.Session.Turns.Edges
	require.Len(t, edges, 2)
	require.Len(t, edges[0].Node.Interactions, 1)
	require.Empty(t, edges[1].Node.Interactions)
	i := edges[0].Node.Interactions[0]
	require.Equal(t, "SUPERSEDED", i.State)
	require.Equal(t, edges[0].Node.LocalID, i.TurnID, "the turn reference is the child's turn")
	require.Equal(t, target, i.SessionID)
	require.Equal(t, "ask", i.RequestID)
}

// measureInteractions seeds n sessions of two turns, each turn with two interactions, and counts
// the statements of a page that reads every turn's interactions.
func measureInteractions(t *testing.T, n int) int64 {
	api := newTestAPI(t, apiOptions{engine: noBackground})
	for s := range n {
		id := fmt.Sprintf("s%03d", s)
		api.seedSession("w", id, 2, "")
		for turn := 1; turn <= 2; turn++ {
			api.interaction(id, fmt.Sprintf("%s-t%d", id, turn), "a")
			api.interaction(id, fmt.Sprintf("%s-t%d", id, turn), "b")
		}
	}
	var page struct {
		Sessions struct {
			Edges []struct {
				Node struct {
					Turns struct {
						Edges []struct {
							Node struct{ Interactions []interactionView }
						}
					}
				}
			}
		}
	}
	before := api.db.Statements()
	api.mustDo(`{ sessions(workspaceId: "w", first: 60) { edges { node { turns { edges { node {
		interactions { requestId state } } } } } } } }`, &page, nil)
	statements := api.db.Statements() - before
	require.Len(t, page.Sessions.Edges, n)
	for _, s := range page.Sessions.Edges {
		require.Len(t, s.Node.Turns.Edges, 2)
		for _, turn := range s.Node.Turns.Edges {
			require.Len(t, turn.Node.Interactions, 2)
		}
	}
	return statements
}

func TestBatchingInteractions(t *testing.T) {
	t.Parallel()
	small, large := measureInteractions(t, 5), measureInteractions(t, 50)
	t.Logf("interactions of every turn: %d SQL statements for 5 sessions, %d for 50", small, large)
	require.Equal(t, small, large)
}

func TestAuditMessagesAndTheirBatching(t *testing.T) {
	t.Parallel()
	measure := func(n int) int64 {
		api := newTestAPI(t, apiOptions{engine: noBackground})
		for s := range n {
			id := fmt.Sprintf("s%03d", s)
			api.seedSession("w", id, 1, "")
			_, err := api.engine.ReportAuditMessage(context.Background(), forkengine.AuditReport{WorkspaceID: "w", SessionID: id,
				Kind: "model_changed", Content: "model b of " + id})
			require.NoError(t, err)
		}
		var page struct {
			Sessions struct {
				Edges []struct {
					Node struct {
						AuditMessages []struct {
							ID, Content   string
							AfterSequence int
						}
					}
				}
			}
		}
		before := api.db.Statements()
		api.mustDo(`{ sessions(workspaceId: "w", first: 100) { edges { node { auditMessages { id content afterSequence } } } } }`, &page, nil)
		statements := api.db.Statements() - before
		require.Len(t, page.Sessions.Edges, n)
		first := page.Sessions.Edges[0].Node.AuditMessages
		require.Len(t, first, 1)
		require.Equal(t, "model b of s000", first[0].Content)
		require.Equal(t, 1, first[0].AfterSequence)
		var node struct{ Node struct{ Content string } }
		api.mustDo(`query($id: ID!) { node(id: $id) { ... on AuditMessage { content } } }`, &node, map[string]any{"id": first[0].ID})
		require.Equal(t, "model b of s000", node.Node.Content)
		return statements
	}
	small, large := measure(5), measure(50)
	t.Logf("audit messages of every session: %d SQL statements for 5 sessions, %d for 50", small, large)
	require.Equal(t, small, large)
}
