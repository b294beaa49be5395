package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/servertest"
)

// inheritedIDs are the ids a fork shows for its turns and their messages, in page order: the
// turn's global id, then its messages' global ids.
type inheritedIDs [][]string

// TestForkedIDsAreTheSameAcrossAReplayAndARestart: the global ids of a committed fork's inherited
// turns and messages (docs/design/shared-history.md §5.2, presented ids) are the same when the
// same forkSession request is sent again (the replay answers the same operation) and after the
// server is stopped and started again on the same SQLite file, and node(id:) resolves every one
// of them to itself, before and after the restart (issue 24, "forks share their history").
func TestForkedIDsAreTheSameAcrossAReplayAndARestart(t *testing.T) {
	t.Parallel()
	db := servertest.SQLite(t)
	first := servertest.Start(t, db, "-no-seed")
	api := first.Client(t, "")
	seedForkSource(api)

	type forked struct {
		ForkSession struct{ ID, TargetSessionID string }
	}
	fork := func(api servertest.Client) forked {
		var out forked
		api.Must(`mutation { forkSession(input: {workspaceId: "w", sourceSessionId: "s", throughTurnId: "t2", requestId: "r1"}) {
			id targetSessionId } }`, nil, &out)
		return out
	}
	op := fork(api)
	phases := api.FollowFork("w", op.ForkSession.ID, nil)
	require.Equal(t, "COMMITTED", phases[len(phases)-1], "phases: %v", phases)
	child := op.ForkSession.TargetSessionID

	want := readInheritedIDs(t, api, child)
	require.Len(t, want, 2, "the turns through the boundary")
	var source struct {
		Session struct {
			Turns struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
	}
	api.Must(`{ session(workspaceId: "w", id: "s") { turns(first: 2) { edges { node { id } } } } }`, nil, &source)
	for i, turn := range want {
		require.Len(t, turn, 3, "a turn and its two messages")
		require.NotEqual(t, source.Session.Turns.Edges[i].Node.ID, turn[0], "the child presents its inherited turn under an id of its own")
	}
	requireNodesResolve(t, api, want)

	// Acknowledged, the fork no longer holds its boundary (the barrier), so only the replay rule
	// can answer the request sent again with this operation.
	api.Must(`mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "w", id: $id) { id } }`,
		map[string]any{"id": op.ForkSession.ID}, nil)
	require.Equal(t, op, fork(api), "a replay of the request answers the same operation")
	require.Equal(t, want, readInheritedIDs(t, api, child), "after a replay")

	require.NoError(t, first.Stop())
	again := servertest.Start(t, db, "-no-seed").Client(t, "")
	require.Equal(t, want, readInheritedIDs(t, again, child), "after a restart")
	requireNodesResolve(t, again, want)
	require.Equal(t, op, fork(again), "a replay after the restart answers the same operation")
	require.Equal(t, want, readInheritedIDs(t, again, child), "after a replay after the restart")
}

// readInheritedIDs reads the session's turns page and each turn's messages.
func readInheritedIDs(t *testing.T, api servertest.Client, session string) inheritedIDs {
	t.Helper()
	var out struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct {
						ID       string
						Messages []struct{ ID string }
					}
				}
			}
		}
	}
	api.Must(`query($id: ID!) { session(workspaceId: "w", id: $id) {
		turns(first: 50) { edges { node { id messages { id } } } } } }`, map[string]any{"id": session}, &out)
	var ids inheritedIDs
	for _, e := range out.Session.Turns.Edges {
		turn := []string{e.Node.ID}
		for _, m := range e.Node.Messages {
			turn = append(turn, m.ID)
		}
		ids = append(ids, turn)
	}
	return ids
}

// requireNodesResolve requires node(id:) of every id to be that object: a Turn for a turn's id,
// a Message of that turn for each of its messages.
func requireNodesResolve(t *testing.T, api servertest.Client, ids inheritedIDs) {
	t.Helper()
	for _, turn := range ids {
		var turnLocalID string
		for i, id := range turn {
			var out struct {
				Node *struct {
					Typename string `json:"__typename"`
					ID       string
					LocalID  string
					TurnID   string
				}
			}
			api.Must(`query($id: ID!) { node(id: $id) { __typename id
				... on Turn { localId } ... on Message { localId turnId } } }`, map[string]any{"id": id}, &out)
			require.NotNil(t, out.Node, "node(id: %q)", id)
			require.Equal(t, id, out.Node.ID)
			if i == 0 {
				require.Equal(t, "Turn", out.Node.Typename, id)
				turnLocalID = out.Node.LocalID
				continue
			}
			require.Equal(t, "Message", out.Node.Typename, id)
			require.Equal(t, turnLocalID, out.Node.TurnID, "message %s is of its turn", id)
		}
	}
}
