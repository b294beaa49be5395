package resolvers_test

import (
	"fmt"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
	"github.com/forkgraph/forkgraph/resolvers"
)

func msgGID(ws, id string) string     { return models.GlobalID(models.NodeMessage, ws, id) }
func lineageGID(ws, op string) string { return models.GlobalID(models.NodeLineage, ws, op) }

// nodeFields reads every Node type's identifying fields through one selection.
const nodeFields = `__typename id
	... on Session { localId workspaceId title }
	... on Turn { localId sessionId }
	... on Message { localId turnId content }
	... on ForkOperation { localId workspaceId status }
	... on Lineage { operationId targetSessionId sourceSession { id } }`

type nodeView struct {
	Typename        string `json:"__typename"`
	ID              string
	LocalID         string
	WorkspaceID     string
	Title           string
	SessionID       string
	TurnID          string
	Content         string
	Status          string
	OperationID     string
	TargetSessionID string
	SourceSession   *struct{ ID string }
}

func (a *testAPI) node(id string) *nodeView {
	a.t.Helper()
	var got struct{ Node *nodeView }
	a.mustDo(`query($id: ID!) { node(id: $id) { `+nodeFields+` } }`, &got, map[string]any{"id": id})
	return got.Node
}

// Issue 12: the same runtime id in two workspaces is two objects with two ids, and node() finds
// each, for every Node type.
func TestSameLocalIDInTwoWorkspaces(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	ops := map[string]string{}
	for _, ws := range []string{"a", "b"} {
		api.seedSession(ws, "s1", 1, "")
		ops[ws] = api.forkAndCommit(ws, "s1", "s1-t1", "r1")
	}
	var lists [2]struct {
		Sessions struct {
			Edges []struct{ Node struct{ ID, LocalID string } }
		}
	}
	for i, ws := range []string{"a", "b"} {
		api.mustDo(`query($ws: ID!) { sessions(workspaceId: $ws, filter: {rootsOnly: true}) { edges { node { id localId } } } }`,
			&lists[i], map[string]any{"ws": ws})
		require.Len(t, lists[i].Sessions.Edges, 1)
		require.Equal(t, "s1", lists[i].Sessions.Edges[0].Node.LocalID)
	}
	require.NotEqual(t, lists[0].Sessions.Edges[0].Node.ID, lists[1].Sessions.Edges[0].Node.ID)

	for _, ws := range []string{"a", "b"} {
		t.Run(ws, func(t *testing.T) {
			api := api.with(t)
			s := api.node(lists[map[string]int{"a": 0, "b": 1}[ws]].Sessions.Edges[0].Node.ID)
			require.Equal(t, nodeView{Typename: "Session", ID: sessionGID(ws, "s1"), LocalID: "s1", WorkspaceID: ws, Title: "Title of s1"}, *s)
			turn := api.node(turnGID(ws, "s1-t1"))
			require.Equal(t, nodeView{Typename: "Turn", ID: turnGID(ws, "s1-t1"), LocalID: "s1-t1", SessionID: "s1"}, *turn)
			msg := api.node(msgGID(ws, "s1-t1-u"))
			require.Equal(t, nodeView{Typename: "Message", ID: msgGID(ws, "s1-t1-u"), LocalID: "s1-t1-u", TurnID: "s1-t1", Content: "question s1-t1"}, *msg)
			op := api.node(opGID(ws, ops[ws]))
			require.Equal(t, nodeView{Typename: "ForkOperation", ID: opGID(ws, ops[ws]), LocalID: ops[ws], WorkspaceID: ws, Status: "COMMITTED"}, *op)
			lineage := api.node(lineageGID(ws, ops[ws]))
			require.Equal(t, "Lineage", lineage.Typename)
			require.Equal(t, lineageGID(ws, ops[ws]), lineage.ID)
			require.Equal(t, ops[ws], lineage.OperationID)
			require.Equal(t, sessionGID(ws, "s1"), lineage.SourceSession.ID)
		})
	}

	t.Run("a lineage has the same id however it is reached", func(t *testing.T) {
		var got struct {
			Session struct {
				Forks []struct{ ID string }
			}
		}
		api.with(t).mustDo(`{ session(workspaceId: "a", id: "s1") { forks { id } } }`, &got, nil)
		require.Equal(t, []struct{ ID string }{{lineageGID("a", ops["a"])}}, got.Session.Forks)
	})
}

func TestNodes(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "s1", 1, "")
	api.seedSession("w", "s2", 0, "")
	api.seedTurn("w", "s2", "s2-t1", forkengine.PhaseRunning)

	t.Run("in order, null for what does not exist", func(t *testing.T) {
		ids := []string{turnGID("w", "s2-t1"), sessionGID("w", "s1"), sessionGID("w", "gone"),
			msgGID("w", "nope"), opGID("w", "nope"), lineageGID("w", "nope"), sessionGID("w", "s1"), sessionGID("elsewhere", "s1")}
		var got struct{ Nodes []*nodeView }
		api.with(t).mustDo(`query($ids: [ID!]!) { nodes(ids: $ids) { `+nodeFields+` } }`, &got, map[string]any{"ids": ids})
		require.Len(t, got.Nodes, len(ids))
		require.Equal(t, "s2-t1", got.Nodes[0].LocalID)
		require.Equal(t, "Title of s1", got.Nodes[1].Title)
		for _, i := range []int{2, 3, 4, 5, 7} {
			require.Nil(t, got.Nodes[i], ids[i])
		}
		require.Equal(t, got.Nodes[1], got.Nodes[6], "a repeated id repeats its object")
	})

	t.Run("a lineage of an operation that did not commit is null", func(t *testing.T) {
		op, err := api.engine.StartFork(t.Context(), forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "s1",
			ThroughTurnID: "s1-t1", RequestID: "pending"})
		require.NoError(t, err)
		var got struct{ Nodes []*nodeView }
		api.with(t).mustDo(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, &got,
			map[string]any{"ids": []string{opGID("w", op.ID), lineageGID("w", op.ID)}})
		require.Equal(t, opGID("w", op.ID), got.Nodes[0].ID)
		require.Nil(t, got.Nodes[1])
	})

	t.Run("no ids, no objects", func(t *testing.T) {
		var got struct{ Nodes []*nodeView }
		api.with(t).mustDo(`{ nodes(ids: []) { id } }`, &got, nil)
		require.Empty(t, got.Nodes)
	})

	t.Run("at most 100 ids", func(t *testing.T) {
		ids := make([]string, resolvers.MaxNodeIDs+1)
		for i := range ids {
			ids[i] = sessionGID("w", fmt.Sprint(i))
		}
		e := api.with(t).expectCode("BAD_USER_INPUT", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids})
		require.Equal(t, resolvers.ReasonTooManyIDs, e.Extensions["reason"])
		var got struct{ Nodes []*nodeView }
		api.with(t).mustDo(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, &got, map[string]any{"ids": ids[:resolvers.MaxNodeIDs]})
		require.Len(t, got.Nodes, resolvers.MaxNodeIDs)
	})

	t.Run("nodes costs what its ids can return", func(t *testing.T) {
		const deep = `query($ids: [ID!]!) { nodes(ids: $ids) { ... on Session { turns(first: 200) { edges { node { messages { content } } } } } } }`
		ids := make([]string, resolvers.MaxNodeIDs)
		for i := range ids {
			ids[i] = sessionGID("w", fmt.Sprint(i))
		}
		api.with(t).expectCode("COMPLEXITY_LIMIT_EXCEEDED", deep, map[string]any{"ids": ids})
		api.with(t).mustDo(deep, nil, map[string]any{"ids": ids[:1]})
	})

	for _, bad := range []string{"s1", "Session:w", "Workspace:w:s1", "Session:w:a%zz", "Session:w:s1:x", "Session: w:s1", "Session:w:s1\t"} {
		t.Run("refused: "+bad, func(t *testing.T) {
			for _, q := range []string{`query($id: ID!) { node(id: $id) { id } }`, `query($id: ID!) { nodes(ids: ["Session:w:s1", $id]) { id } }`} {
				e := api.with(t).expectCode("BAD_USER_INPUT", q, map[string]any{"id": bad})
				require.Equal(t, forkengine.ReasonInvalidID, e.Extensions["reason"], "%+v", e)
			}
		})
	}
}

func TestNodeAuthorization(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{auth: tokenAuth(t, tokA+"=wa, "+tokB+"=wb")})
	api.seedSession("wa", "s", 1, "")
	api.seedSession("wb", "s", 1, "")
	node := `query($id: ID!) { node(id: $id) { id } }`
	nodes := `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		token, code string
	}{
		{"node without a token", node, map[string]any{"id": sessionGID("wa", "s")}, "", "UNAUTHENTICATED"},
		{"node of another workspace", node, map[string]any{"id": sessionGID("wb", "s")}, tokA, "FORBIDDEN"},
		{"node of another workspace that does not exist", node, map[string]any{"id": turnGID("wb", "nope")}, tokA, "FORBIDDEN"},
		{"nodes with one id of another workspace", nodes, map[string]any{"ids": []string{sessionGID("wa", "s"), turnGID("wb", "s-t1")}}, tokA, "FORBIDDEN"},
		{"node of its own workspace", node, map[string]any{"id": sessionGID("wb", "s")}, tokB, ""},
		{"nodes of its own workspace", nodes, map[string]any{"ids": []string{sessionGID("wa", "s"), turnGID("wa", "s-t1")}}, tokA, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []client.Option
			if tc.token != "" {
				opts = append(opts, bearer(tc.token))
			}
			var got struct {
				Node  *struct{ ID string }
				Nodes []*struct{ ID string }
			}
			errs := api.with(t).do(tc.query, &got, tc.vars, opts...)
			if tc.code == "" {
				require.Empty(t, errs)
				require.True(t, got.Node != nil || (len(got.Nodes) == 2 && got.Nodes[1] != nil))
				return
			}
			require.Len(t, errs, 1)
			require.Equal(t, tc.code, errs[0].code())
			require.Nil(t, got.Node)
			require.Nil(t, got.Nodes)
		})
	}

	// nodes(ids: []) names no workspace and reads nothing, but still needs a valid token.
	var got struct{ Nodes []*struct{ ID string } }
	errs := api.with(t).do(`{ nodes(ids: []) { id } }`, &got, nil)
	require.Len(t, errs, 1)
	require.Equal(t, "UNAUTHENTICATED", errs[0].code())
	errs = api.with(t).do(`{ nodes(ids: []) { id } }`, &got, nil, bearer("not-a-token"))
	require.Len(t, errs, 1)
	require.Equal(t, "UNAUTHENTICATED", errs[0].code())
	require.Empty(t, api.with(t).do(`{ nodes(ids: []) { id } }`, &got, nil, bearer(tokA)))
	require.Empty(t, got.Nodes)
}

// nodes reads each type with one statement (operations and lineages share theirs, lineages add
// the committed projection's), however many ids it is given.
func TestNodesAreBatched(t *testing.T) {
	t.Parallel()
	measure := func(n int) (mixed, sessionsOnly int64) {
		api := newTestAPI(t, apiOptions{engine: noBackground})
		var ids, sessionIDs []string
		for i := range n {
			s := fmt.Sprintf("s%03d", i)
			api.seedSession("w", s, 1, "")
			op := api.forkAndCommit("w", s, s+"-t1", "r-"+s)
			ids = append(ids, sessionGID("w", s), turnGID("w", s+"-t1"), msgGID("w", s+"-t1-a"), opGID("w", op), lineageGID("w", op))
			sessionIDs = append(sessionIDs, sessionGID("w", s))
		}
		var got struct{ Nodes []*struct{ ID string } }
		before := api.db.Statements()
		api.mustDo(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, &got, map[string]any{"ids": ids})
		mixed = api.db.Statements() - before
		require.Len(t, got.Nodes, len(ids))
		for i, node := range got.Nodes {
			require.NotNil(t, node, ids[i])
			require.Equal(t, ids[i], node.ID)
		}
		before = api.db.Statements()
		api.mustDo(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, &got, map[string]any{"ids": sessionIDs})
		return mixed, api.db.Statements() - before
	}
	mixed2, sessions2 := measure(2)
	mixed20, sessions20 := measure(20)
	t.Logf("nodes: %d SQL statements for 10 ids of five types, %d for 100; %d for 2 sessions, %d for 20",
		mixed2, mixed20, sessions2, sessions20)
	require.Equal(t, mixed2, mixed20)
	require.Equal(t, int64(1), sessions2)
	require.Equal(t, int64(1), sessions20)
}

func TestLocalIDsThatLookGlobal(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	// Not of global form (two parts; an unknown type): a local id like any other.
	for _, id := range []string{"Session:two-parts", "urn:w:s", "Session:w:a%zz"} {
		var got struct{ ReportSession struct{ ID, LocalID string } }
		api.mustDo(`mutation($id: ID!) { reportSession(input: {workspaceId: "w", id: $id, provider: "simulated"}) { id localId } }`,
			&got, map[string]any{"id": id})
		require.Equal(t, id, got.ReportSession.LocalID)
		require.Equal(t, sessionGID("w", id), got.ReportSession.ID)
		require.Equal(t, id, api.node(got.ReportSession.ID).LocalID, "and its global id finds it")
	}
	// Of global form: read as the global id it is, so it names the session "s", never a session
	// whose local id is "Session:w:s".
	var got struct{ ReportSession struct{ LocalID string } }
	api.mustDo(`mutation { reportSession(input: {workspaceId: "w", id: "Session:w:s", provider: "simulated"}) { localId } }`, &got, nil)
	require.Equal(t, "s", got.ReportSession.LocalID)
}
