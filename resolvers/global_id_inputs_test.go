package resolvers_test

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/graph"
)

// idCoordinates lists every argument (Object.field.argument) and input field (Input.field) of
// type ID in the schema, except the ones that name no object (workspaces, request ids) and the
// Node lookups, which take global ids only.
func idCoordinates(t *testing.T) []string {
	t.Helper()
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	notObjects := map[string]bool{"workspaceId": true, "requestId": true}
	globalOnly := map[string]bool{"Query.node.id": true, "Query.nodes.ids": true}
	isID := func(t *ast.Type) bool { return t.Name() == "ID" }
	var out []string
	for _, def := range schema.Types {
		if def.BuiltIn {
			continue
		}
		for _, f := range def.Fields {
			if def.Kind == ast.InputObject && isID(f.Type) && !notObjects[f.Name] {
				out = append(out, def.Name+"."+f.Name)
			}
			for _, arg := range f.Arguments {
				c := def.Name + "." + f.Name + "." + arg.Name
				if isID(arg.Type) && !notObjects[arg.Name] && !globalOnly[c] {
					out = append(out, c)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Every argument and input field that names an object accepts the global id a query returned,
// and does with it exactly what it does with the local id. The table must cover every such id in
// the schema, so a new one cannot be forgotten.
func TestEveryIDInputAcceptsGlobalIDs(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 2, "")
	api.seedSession("w", "gone", 0, "")
	op := api.forkAndCommit("w", "src", "src-t2", "r-committed")
	var target struct {
		ForkOperation struct{ TargetSessionID string }
	}
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "w", id: $id) { targetSessionId } }`, &target, map[string]any{"id": op})

	type check func(t *testing.T, api *testAPI)
	want := func(query string, vars map[string]any, expected string) check {
		return func(t *testing.T, api *testAPI) {
			var got map[string]any
			api.mustDo(query, &got, vars)
			require.JSONEq(t, expected, mustJSON(t, got))
		}
	}
	// The second fork (through src-t1) is made by its coordinates' case and read by later ones.
	forkThroughT1 := want(`mutation($s: ID!, $t: ID!, $target: ID) { forkSession(input: {workspaceId: "w",
		sourceSessionId: $s, throughTurnId: $t, requestId: "r-global", targetSessionId: $target}) {
		sourceSessionId throughTurnId targetSessionId } }`,
		map[string]any{"s": sessionGID("w", "src"), "t": turnGID("w", "src-t1"), "target": sessionGID("w", "fork-of-src")},
		`{"forkSession": {"sourceSessionId": "src", "throughTurnId": "src-t1", "targetSessionId": "fork-of-src"}}`)
	filter := func(field, id string) check {
		return want(`query($f: ForkOperationFilter) { forkOperations(workspaceId: "w", filter: $f) { totalCount } }`,
			map[string]any{"f": map[string]any{field: id}}, `{"forkOperations": {"totalCount": 1}}`)
	}
	cases := []struct {
		coordinates []string
		check       check
	}{
		{[]string{"Query.session.id"}, want(`query($id: ID!) { session(workspaceId: "w", id: $id) { localId } }`,
			map[string]any{"id": sessionGID("w", "src")}, `{"session": {"localId": "src"}}`)},
		{[]string{"Query.forkOperation.id"}, want(`query($id: ID!) { forkOperation(workspaceId: "w", id: $id) { localId } }`,
			map[string]any{"id": opGID("w", op)}, `{"forkOperation": {"localId": "`+op+`"}}`)},
		{[]string{"Mutation.acknowledgeForkOperation.id"}, want(`mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "w", id: $id) { localId status } }`,
			map[string]any{"id": opGID("w", op)}, `{"acknowledgeForkOperation": {"localId": "`+op+`", "status": "COMMITTED"}}`)},
		{[]string{"Mutation.reconcileForkOperation.id", "Mutation.abandonForkOperation.id"}, func(t *testing.T, api *testAPI) {
			// The operation is found (a missing one is NOT_FOUND) and refused as not unknown.
			for _, q := range []string{`mutation($id: ID!) { reconcileForkOperation(workspaceId: "w", id: $id) { id } }`,
				`mutation($id: ID!) { abandonForkOperation(workspaceId: "w", id: $id, reason: "r") { id } }`} {
				e := api.expectCode("RECONCILE_CONFLICT", q, map[string]any{"id": opGID("w", op)})
				require.Equal(t, "not_unknown", e.Extensions["reason"])
			}
		}},
		{[]string{"Subscription.forkOperationUpdated.id"}, func(t *testing.T, api *testAPI) {
			ws := api.dialWS(nil)
			ws.subscribe("1", `subscription($id: ID!) { forkOperationUpdated(workspaceId: "w", id: $id) { localId status } }`,
				map[string]any{"id": opGID("w", op)})
			var frame struct {
				ForkOperationUpdated struct{ LocalID, Status string }
			}
			ws.nextData("1", &frame)
			require.Equal(t, op, frame.ForkOperationUpdated.LocalID)
			ws.complete("1")
		}},
		{[]string{"ReportSessionInput.id"}, want(`mutation($id: ID!) { reportSession(input: {workspaceId: "w", id: $id,
			provider: "simulated", title: "Renamed"}) { localId title } }`,
			map[string]any{"id": sessionGID("w", "src")}, `{"reportSession": {"localId": "src", "title": "Renamed"}}`)},
		{[]string{"ReportTurnInput.sessionId", "ReportTurnInput.id"}, want(`mutation($s: ID!, $id: ID!) { reportTurn(input: {workspaceId: "w",
			sessionId: $s, id: $id, phase: RUNNING}) { localId sessionId sequence } }`,
			map[string]any{"s": sessionGID("w", "src"), "id": turnGID("w", "src-t3")},
			`{"reportTurn": {"localId": "src-t3", "sessionId": "src", "sequence": 3}}`)},
		{[]string{"AppendMessagesInput.sessionId", "AppendMessagesInput.turnId", "MessageInput.id"},
			want(`mutation($s: ID!, $t: ID!, $m: ID) { appendMessages(input: {workspaceId: "w", sessionId: $s, turnId: $t,
			messages: [{id: $m, role: USER, content: "again"}]}) { localId turnId sessionId } }`,
				map[string]any{"s": sessionGID("w", "src"), "t": turnGID("w", "src-t3"), "m": msgGID("w", "m-global")},
				`{"appendMessages": [{"localId": "m-global", "turnId": "src-t3", "sessionId": "src"}]}`)},
		{[]string{"ReportInteractionInput.sessionId", "ReportInteractionInput.turnId"},
			want(`mutation($s: ID!, $t: ID!) { reportInteraction(input: {workspaceId: "w", sessionId: $s, turnId: $t,
			requestId: "r1", kind: PERMISSION, prompt: {tool: "shell"}, state: PENDING}) { requestId turnId sessionId } }`,
				map[string]any{"s": sessionGID("w", "src"), "t": turnGID("w", "src-t3")},
				`{"reportInteraction": {"requestId": "r1", "turnId": "src-t3", "sessionId": "src"}}`)},
		{[]string{"ReportAuditMessageInput.sessionId", "ReportAuditMessageInput.id"},
			want(`mutation($s: ID!, $id: ID) { reportAuditMessage(input: {workspaceId: "w", sessionId: $s, id: $id,
			kind: "model_changed", content: "model b"}) { localId sessionId } }`,
				map[string]any{"s": sessionGID("w", "src"), "id": "AuditMessage:w:a-global"},
				`{"reportAuditMessage": {"localId": "a-global", "sessionId": "src"}}`)},
		{[]string{"ForkSessionInput.sourceSessionId", "ForkSessionInput.throughTurnId", "ForkSessionInput.targetSessionId"}, forkThroughT1},
		{[]string{"ForkOperationFilter.sourceSessionId"}, want(`query($id: ID) { forkOperations(workspaceId: "w", filter: {sourceSessionId: $id}) { totalCount } }`,
			map[string]any{"id": sessionGID("w", "src")}, `{"forkOperations": {"totalCount": 2}}`)},
		{[]string{"ForkOperationFilter.targetSessionId"}, filter("targetSessionId", sessionGID("w", target.ForkOperation.TargetSessionID))},
		{[]string{"ForkOperationFilter.throughTurnId"}, filter("throughTurnId", turnGID("w", "src-t1"))},
		{[]string{"Query.verifyForkedSession.sessionId"}, want(`query($id: ID!) { verifyForkedSession(workspaceId: "w", sessionId: $id) {
			status session { localId } } }`, map[string]any{"id": sessionGID("w", "src")},
			`{"verifyForkedSession": {"status": "NOT_A_FORK", "session": {"localId": "src"}}}`)},
		{[]string{"Mutation.deleteSession.id"}, func(t *testing.T, api *testAPI) {
			api.mustDo(`mutation($id: ID!) { deleteSession(workspaceId: "w", id: $id) }`, nil, map[string]any{"id": sessionGID("w", "gone")})
			var got struct{ Session struct{ DeletedAt *string } }
			api.mustDo(`{ session(workspaceId: "w", id: "gone") { deletedAt } }`, &got, nil)
			require.NotNil(t, got.Session.DeletedAt)
		}},
	}
	var covered []string
	for _, tc := range cases {
		covered = append(covered, tc.coordinates...)
		t.Run(tc.coordinates[0], func(t *testing.T) { tc.check(t, api.with(t)) })
	}
	sort.Strings(covered)
	require.Equal(t, idCoordinates(t), covered, "every id argument and input field is in the table")
}

// A global id that names another type or another workspace than the field's is BAD_USER_INPUT
// (invalid_id) with a message that says which, and nothing changes.
func TestGlobalIDsOfTheWrongObjectAreRefused(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 1, "")
	api.seedSession("other", "src", 1, "")
	snapshot := func() string {
		var got map[string]any
		api.mustDo(`{ sessions(workspaceId: "w", filter: {includeDeleted: true}) { totalCount edges { node { title deletedAt
			messages { localId } turns { totalCount } } } } forkOperations(workspaceId: "w") { totalCount } }`, &got, nil)
		return mustJSON(t, got)
	}
	before := snapshot()
	for _, tc := range []struct {
		name, query, message string
		vars                 map[string]any
	}{
		{"a turn as a session", `mutation($id: ID!) { reportSession(input: {workspaceId: "w", id: $id, provider: "simulated", title: "x"}) { id } }`,
			"id names a Turn, not a Session", map[string]any{"id": turnGID("w", "src-t1")}},
		{"another workspace's session", `mutation($id: ID!) { reportSession(input: {workspaceId: "w", id: $id, provider: "simulated", title: "x"}) { id } }`,
			`id belongs to workspace "other", not "w"`, map[string]any{"id": sessionGID("other", "src")}},
		{"a session read in another workspace", `query($id: ID!) { session(workspaceId: "w", id: $id) { id } }`,
			`id belongs to workspace "other", not "w"`, map[string]any{"id": sessionGID("other", "src")}},
		{"an operation as a session", `mutation($id: ID!) { deleteSession(workspaceId: "w", id: $id) }`,
			"id names a ForkOperation, not a Session", map[string]any{"id": opGID("w", "src")}},
		{"a session as a turn", `mutation($s: ID!, $t: ID!) { forkSession(input: {workspaceId: "w", sourceSessionId: $s, throughTurnId: $t, requestId: "r"}) { id } }`,
			"throughTurnId names a Session, not a Turn", map[string]any{"s": "src", "t": sessionGID("w", "src")}},
		{"a lineage as a fork target", `mutation($target: ID) { forkSession(input: {workspaceId: "w", sourceSessionId: "src", throughTurnId: "src-t1", requestId: "r", targetSessionId: $target}) { id } }`,
			"targetSessionId names a Lineage, not a Session", map[string]any{"target": lineageGID("w", "x")}},
		{"a turn as a message", `mutation($m: ID) { appendMessages(input: {workspaceId: "w", sessionId: "src", turnId: "src-t1", messages: [{role: USER, content: "ok"}, {id: $m, role: USER, content: "x"}]}) { id } }`,
			"id names a Turn, not a Message", map[string]any{"m": turnGID("w", "src-t1")}},
		{"another workspace's turn", `mutation($t: ID!) { reportTurn(input: {workspaceId: "w", sessionId: "src", id: $t, phase: RUNNING}) { id } }`,
			`id belongs to workspace "other", not "w"`, map[string]any{"t": turnGID("other", "src-t9")}},
		{"a filter's turn as a session", `query($id: ID) { forkOperations(workspaceId: "w", filter: {sourceSessionId: $id}) { totalCount } }`,
			"sourceSessionId names a Turn, not a Session", map[string]any{"id": turnGID("w", "src-t1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := api.with(t).expectCode("BAD_USER_INPUT", tc.query, tc.vars)
			require.Equal(t, forkengine.ReasonInvalidID, e.Extensions["reason"])
			require.Contains(t, e.Message, tc.message)
		})
	}
	t.Run("an operation followed in another workspace", func(t *testing.T) {
		ws := api.with(t).dialWS(nil)
		ws.subscribe("1", `subscription($id: ID!) { forkOperationUpdated(workspaceId: "w", id: $id) { id } }`,
			map[string]any{"id": opGID("other", "op")})
		errs := ws.streamError("1")
		require.Equal(t, "BAD_USER_INPUT", errs[0].code())
		require.Contains(t, errs[0].Message, `id belongs to workspace "other", not "w"`)
	})
	require.Equal(t, before, snapshot(), "nothing changed")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}
