package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Issue 24: a fork's inherited turns and messages are read through its history, and the API
// presents them as the fork's own: in its turns and transcript, with ids of the fork's own that
// node(id:) resolves and that a fork of the fork can name as its boundary.
func TestInheritedTurnsAndMessagesThroughTheAPI(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("ws", "s1", 3, "")
	op := api.forkAndCommit("ws", "s1", "s1-t2", "r1")
	var got struct {
		ForkOperation struct {
			TargetSessionID string
			TargetTurnID    string
			Session         struct {
				ID    string
				Turns struct {
					TotalCount int
					Edges      []struct {
						Node struct {
							ID, LocalID, SessionID string
							Messages               []struct{ ID, LocalID, TurnID, Content string }
						}
					}
				}
				Messages []struct{ Content string }
			}
		}
	}
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "ws", id: $id) { targetSessionId targetTurnId
		session { id turns { totalCount edges { node { id localId sessionId messages { id localId turnId content } } } }
			messages { content } } } }`, &got, map[string]any{"id": op})
	fork := got.ForkOperation
	turns := fork.Session.Turns
	require.Equal(t, 2, turns.TotalCount)
	require.Len(t, turns.Edges, 2)
	require.Equal(t, fork.TargetTurnID, turns.Edges[1].Node.LocalID)
	require.Equal(t, []struct{ Content string }{{"question s1-t1"}, {"answer s1-t1"}, {"question s1-t2"}, {"answer s1-t2"}},
		fork.Session.Messages)
	for _, e := range turns.Edges {
		turn := e.Node
		require.Equal(t, fork.TargetSessionID, turn.SessionID)
		require.Regexp(t, `^h[0-9A-Za-z_-]{11}-t[0-9a-z]+$`, turn.LocalID)
		node := api.node(turn.ID)
		require.NotNil(t, node, turn.ID)
		require.Equal(t, "Turn", node.Typename)
		require.Equal(t, turn.LocalID, node.LocalID)
		require.Equal(t, fork.TargetSessionID, node.SessionID)
		for _, m := range turn.Messages {
			require.Equal(t, turn.LocalID, m.TurnID)
			node := api.node(m.ID)
			require.NotNil(t, node, m.ID)
			require.Equal(t, "Message", node.Typename)
			require.Equal(t, m.Content, node.Content)
			require.Equal(t, turn.LocalID, node.TurnID)
		}
	}

	// A fork of the fork through an inherited turn, named by its global id.
	var forked struct{ ForkSession struct{ ID, Status string } }
	api.mustDo(`mutation($input: ForkSessionInput!) { forkSession(input: $input) { id status } }`, &forked,
		map[string]any{"input": map[string]any{"workspaceId": "ws", "sourceSessionId": fork.Session.ID,
			"throughTurnId": turns.Edges[0].Node.ID, "requestId": "r2"}})
	require.Equal(t, "ACCEPTED", forked.ForkSession.Status)
}
