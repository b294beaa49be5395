package resolvers_test

import (
	"context"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/client"
	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
)

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: func(c *forkengine.Config) { c.NoBackground = true; c.DisableBarrier = true }})
	api.seedSession("w", "src", 2, "")
	api.seedTurn("w", "src", "src-running", forkengine.PhaseRunning)
	noDriverSession := "p-nodriver"
	_, err := api.engine.ReportSession(t.Context(), forkengine.SessionReport{WorkspaceID: "w", ID: "nodriver", Provider: "nope",
		ProviderSessionID: &noDriverSession})
	require.NoError(t, err)
	api.seedTurn("w", "nodriver", "nodriver-t1", forkengine.PhaseSettled)

	var started struct{ ForkSession forkOp }
	api.mustDo(forkMutation, &started, map[string]any{"source": "src", "through": "src-t1", "req": "active"})
	active := started.ForkSession // stays prepared: the engine runs no background work here

	reason := func(e gqlError) string { s, _ := e.Extensions["reason"].(string); return s }
	cases := []struct {
		name, code, reason, query string
		vars                      map[string]any
	}{
		{"first below 0", "BAD_USER_INPUT", "invalid_first", `{ sessions(workspaceId: "w", first: -1) { totalCount } }`, nil},
		{"first above 200", "BAD_USER_INPUT", "invalid_first", `{ forkOperations(workspaceId: "w", first: 201) { totalCount } }`, nil},
		{"last below 0", "BAD_USER_INPUT", "invalid_last", `{ forkOperations(workspaceId: "w", last: -1) { totalCount } }`, nil},
		{"last above 200", "BAD_USER_INPUT", "invalid_last", `{ session(workspaceId: "w", id: "src") { turns(last: 201) { totalCount } } }`, nil},
		{"first with last", "BAD_USER_INPUT", "conflicting_page_arguments", `{ sessions(workspaceId: "w", first: 1, last: 1) { totalCount } }`, nil},
		{"first with before", "BAD_USER_INPUT", "conflicting_page_arguments",
			`query($c: String) { sessions(workspaceId: "w", first: 1, before: $c) { totalCount } }`, map[string]any{"c": sessionCursor(t, api)}},
		{"last with after", "BAD_USER_INPUT", "conflicting_page_arguments",
			`query($c: String) { sessions(workspaceId: "w", last: 1, after: $c) { totalCount } }`, map[string]any{"c": sessionCursor(t, api)}},
		{"after with before", "BAD_USER_INPUT", "conflicting_page_arguments",
			`{ session(workspaceId: "w", id: "src") { turns(after: "x", before: "y") { totalCount } } }`, nil},
		{"before of another list", "BAD_USER_INPUT", "invalid_cursor",
			`query($c: String) { forkOperations(workspaceId: "w", before: $c) { totalCount } }`, map[string]any{"c": sessionCursor(t, api)}},
		{"malformed before", "BAD_USER_INPUT", "invalid_cursor", `{ session(workspaceId: "w", id: "src") { turns(last: 1, before: "%%%") { totalCount } } }`, nil},
		{"malformed cursor", "BAD_USER_INPUT", "invalid_cursor", `{ sessions(workspaceId: "w", after: "%%%") { totalCount } }`, nil},
		{"cursor of another list", "BAD_USER_INPUT", "invalid_cursor",
			`query($c: String) { forkOperations(workspaceId: "w", after: $c) { totalCount } }`, map[string]any{"c": sessionCursor(t, api)}},
		{"settings not an object", "BAD_USER_INPUT", "",
			`mutation { reportSession(input: {workspaceId: "w", id: "s9", provider: "simulated", settings: [1]}) { id } }`, nil},
		{"phase backwards", "BAD_USER_INPUT", forkengine.ReasonTurnPhaseBackwards,
			`mutation { reportTurn(input: {workspaceId: "w", sessionId: "src", id: "src-t1", phase: RUNNING}) { id } }`, nil},
		{"turn of an unknown session", "NOT_FOUND", "",
			`mutation { reportTurn(input: {workspaceId: "w", sessionId: "ghost", id: "g1", phase: RUNNING}) { id } }`, nil},
		{"acknowledge an unknown operation", "NOT_FOUND", "", `mutation { acknowledgeForkOperation(workspaceId: "w", id: "ghost") { id } }`, nil},
		{"boundary not settled", "FORK_CONFLICT", forkengine.ReasonTurnNotSettled, forkMutation,
			map[string]any{"source": "src", "through": "src-running", "req": "r2"}},
		{"boundary unknown", "FORK_CONFLICT", forkengine.ReasonTurnNotFound, forkMutation,
			map[string]any{"source": "src", "through": "ghost", "req": "r3"}},
		{"active fork on the boundary", "FORK_IN_PROGRESS", "", forkMutation,
			map[string]any{"source": "src", "through": "src-t1", "req": "r4"}},
		{"provider without a driver", "FORK_UNSUPPORTED", "", forkMutation,
			map[string]any{"source": "nodriver", "through": "nodriver-t1", "req": "r5"}},
		{"acknowledge before commit", "ACKNOWLEDGE_CONFLICT", "",
			`mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "w", id: $id) { id } }`, map[string]any{"id": active.ID}},
		{"session id reserved by a fork", "FORK_CONFLICT", forkengine.ReasonTargetReserved,
			`mutation($id: ID!) { reportSession(input: {workspaceId: "w", id: $id, provider: "simulated"}) { id } }`,
			map[string]any{"id": active.TargetSessionID}},
		{"blank workspace on a read", "BAD_USER_INPUT", forkengine.ReasonInvalidID, `{ sessions(workspaceId: " ") { totalCount } }`, nil},
		{"control character in an id", "BAD_USER_INPUT", forkengine.ReasonInvalidID,
			`mutation { reportSession(input: {workspaceId: "w", id: "x\u0000y", provider: "simulated"}) { id } }`, nil},
		{"oversized title", "BAD_USER_INPUT", "",
			`mutation($t: String) { reportSession(input: {workspaceId: "w", id: "long", provider: "simulated", title: $t}) { id } }`,
			map[string]any{"t": strings.Repeat("x", forkengine.MaxTextLength+1)}},
		{"parse error", "GRAPHQL_PARSE_FAILED", "", `{ sessions(`, nil},
		{"unknown field", "GRAPHQL_VALIDATION_FAILED", "", `{ nope }`, nil},
		{"too complex", "COMPLEXITY_LIMIT_EXCEEDED", "", `{ sessions(workspaceId: "w", first: 200) { edges { node {
			turns(first: 200) { edges { node { id messages { content } } } } } } } }`, nil},
		{"too complex paging backward", "COMPLEXITY_LIMIT_EXCEEDED", "", `{ sessions(workspaceId: "w", last: 200) { edges { node {
			turns(last: 200) { edges { node { id messages { content } } } } } } } }`, nil},
		{"too deep", "COMPLEXITY_LIMIT_EXCEEDED", "depth_limit", `{ session(workspaceId: "w", id: "src") { forks { targetSession {
			forks { targetSession { forks { targetSession { forks { targetSession { forks { targetSession { forks { targetSession {
			id } } } } } } } } } } } } } }`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := api.with(t).expectCode(tc.code, tc.query, tc.vars)
			require.Equal(t, tc.reason, reason(e), "error: %+v", e)
			require.NotEmpty(t, e.Message)
			if tc.code == "FORK_IN_PROGRESS" {
				require.Equal(t, true, e.Extensions["retryable"])
			}
		})
	}

	t.Run("internal errors hide their cause and carry the request id", func(t *testing.T) {
		require.NoError(t, api.db.Close())
		withID := func(r *client.Request) {
			r.HTTP = r.HTTP.WithContext(access.WithRequestID(r.HTTP.Context(), "req-42"))
		}
		e := api.with(t).expectCode("INTERNAL_SERVER_ERROR", `{ sessions(workspaceId: "w") { totalCount } }`, nil, withID)
		require.Equal(t, "internal server error (request id req-42)", e.Message)
		require.Equal(t, "req-42", e.Extensions["requestId"])
		require.False(t, strings.Contains(e.Message, "sql"))
	})
}

func sessionCursor(t *testing.T, api *testAPI) string {
	var p struct {
		Sessions struct{ PageInfo struct{ EndCursor string } }
	}
	api.mustDo(`{ sessions(workspaceId: "w", first: 1) { pageInfo { endCursor } } }`, &p, nil)
	require.NotEmpty(t, p.Sessions.PageInfo.EndCursor)
	return p.Sessions.PageInfo.EndCursor
}

func TestPanicsBecomeInternalErrors(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 0, "")
	api.srv.AroundFields(func(ctx context.Context, next graphql.Resolver) (any, error) {
		if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Name == "title" {
			panic("secret detail")
		}
		return next(ctx)
	})
	e := api.expectCode("INTERNAL_SERVER_ERROR", `{ session(workspaceId: "w", id: "s") { id title } }`, nil)
	require.NotContains(t, e.Message, "secret")
}
