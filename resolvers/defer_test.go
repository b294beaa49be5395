package resolvers_test

import (
	"bufio"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/limits"
	"github.com/forkgraph/forkgraph/resolvers"
)

// Issue 12: a query with @defer over HTTP answered latestTurn: null (its real value was the
// session's last turn). These run gqlgen's generated executor, so they check what it really
// defers, on every transport.

// apolloAccept is the Accept header Apollo Client 4 sends with @defer.
const apolloAccept = "multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json"

const deferredLatestTurn = `query($id: ID!) {
	session(workspaceId: "w", id: $id) {
		title
		... @defer(label: "latest") { latestTurn { sequence phase messages { content } } }
	}
}`

// wantLatest is the deferred fragment of deferredLatestTurn for a session seeded with 3 turns.
const wantLatest = `{"latestTurn":{"sequence":3,"phase":"SETTLED","messages":[{"content":"question s-t3"},{"content":"answer s-t3"}]}}`

// incrementalPayload is one payload of an incremental response, in either shape.
type incrementalPayload struct {
	Data        json.RawMessage `json:"data"`
	Errors      []gqlError      `json:"errors"`
	HasNext     *bool           `json:"hasNext"`
	Incremental []struct {
		Data   json.RawMessage `json:"data"`
		Path   []any           `json:"path"`
		Label  string          `json:"label"`
		Errors []gqlError      `json:"errors"`
	} `json:"incremental"`
}

func (a *testAPI) postGraphQL(query string, vars map[string]any, accept string) *http.Response {
	a.t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(a.t, err)
	req, err := http.NewRequest(http.MethodPost, a.url+"/graphql", strings.NewReader(string(body)))
	require.NoError(a.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(a.t, err)
	a.t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// multipartPayloads reads a multipart/mixed body part by part.
func multipartPayloads(t *testing.T, resp *http.Response) []incrementalPayload {
	t.Helper()
	mediaType, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	require.NoError(t, err)
	require.Equal(t, "multipart/mixed", mediaType)
	require.Equal(t, "-", params["boundary"])
	require.Equal(t, "20220824", params["deferspec"])
	reader := multipart.NewReader(resp.Body, params["boundary"])
	var payloads []incrementalPayload
	for {
		part, err := reader.NextPart()
		if err == io.EOF {
			return payloads
		}
		require.NoError(t, err)
		require.Equal(t, "application/json; charset=utf-8", part.Header.Get("Content-Type"))
		var p incrementalPayload
		require.NoError(t, json.NewDecoder(part).Decode(&p))
		payloads = append(payloads, p)
	}
}

// requireDeferredLatest checks the two payloads of deferredLatestTurn.
func requireDeferredLatest(t *testing.T, payloads []incrementalPayload) {
	t.Helper()
	require.Len(t, payloads, 2)
	var initial struct{ Session map[string]any }
	require.NoError(t, json.Unmarshal(payloads[0].Data, &initial))
	require.Equal(t, map[string]any{"title": "Title of s"}, initial.Session,
		"the first payload leaves the deferred field out (gqlgen wrote latestTurn: null)")
	require.NotNil(t, payloads[0].HasNext)
	require.True(t, *payloads[0].HasNext)
	require.Empty(t, payloads[0].Errors)
	last := payloads[1]
	require.Nil(t, last.Data)
	require.NotNil(t, last.HasNext)
	require.False(t, *last.HasNext)
	require.Len(t, last.Incremental, 1)
	require.JSONEq(t, wantLatest, string(last.Incremental[0].Data))
	require.Equal(t, []any{"session"}, last.Incremental[0].Path)
	require.Equal(t, "latest", last.Incremental[0].Label)
	require.Empty(t, last.Incremental[0].Errors)
}

func TestDeferOverHTTPStreamsMultipart(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 3, "")
	resp := api.postGraphQL(deferredLatestTurn, map[string]any{"id": "s"}, apolloAccept)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	requireDeferredLatest(t, multipartPayloads(t, resp))
}

// An error inside a deferred fragment is in that fragment's errors, beside its data: never a
// silently null field.
func TestDeferredFragmentErrorsArriveWithTheFragment(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 1, "")
	resp := api.postGraphQL(`{
		session(workspaceId: "w", id: "s") {
			title
			... @defer(label: "bad") { turns(first: 1000) { edges { cursor } } }
		}
	}`, nil, apolloAccept)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	payloads := multipartPayloads(t, resp)
	require.Len(t, payloads, 2)
	require.True(t, *payloads[0].HasNext)
	item := payloads[1].Incremental
	require.Len(t, item, 1)
	require.Equal(t, []any{"session"}, item[0].Path)
	require.Equal(t, "bad", item[0].Label)
	require.Len(t, item[0].Errors, 1, "data: %s", item[0].Data)
	require.Equal(t, "BAD_USER_INPUT", item[0].Errors[0].code())
	require.Equal(t, []any{"session", "turns"}, item[0].Errors[0].Path)
	require.False(t, *payloads[1].HasNext)
}

// Without multipart/mixed in Accept the deferred fields could not be delivered: 406 before
// anything runs, under either JSON media type.
func TestDeferWithoutMultipartAcceptIsRefused(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 3, "")
	for _, accept := range []string{"application/json", "application/graphql-response+json", "*/*", "multipart/mixed;deferSpec=20230621, application/json"} {
		resp := api.postGraphQL(deferredLatestTurn, map[string]any{"id": "s"}, accept)
		require.Equal(t, http.StatusNotAcceptable, resp.StatusCode, accept)
		var body struct{ Errors []gqlError }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		require.Len(t, body.Errors, 1)
		require.Equal(t, "INCREMENTAL_DELIVERY_NOT_ACCEPTED", body.Errors[0].code(), accept)
	}
	// @defer(if: false) defers nothing: a plain answer.
	var out struct {
		Session struct{ LatestTurn struct{ Sequence int } }
	}
	api.mustDo(`{ session(workspaceId: "w", id: "s") { ... @defer(if: false) { latestTurn { sequence } } } }`, &out, nil)
	require.Equal(t, 3, out.Session.LatestTurn.Sequence)
}

// gqlgen's executor sends one response for a mutation and drops deferred fields, so @defer in
// a mutation is refused before it runs: nothing changes.
func TestDeferInMutationIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	resp := api.postGraphQL(`mutation {
		reportSession(input: {workspaceId: "w", id: "new", provider: "simulated"}) { ... @defer { latestTurn { sequence } } }
	}`, nil, apolloAccept)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var body struct{ Errors []gqlError }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Len(t, body.Errors, 1)
	require.Equal(t, "INCREMENTAL_DELIVERY_NOT_SUPPORTED", body.Errors[0].code(), "error: %+v", body.Errors[0])
	require.Equal(t, "defer_in_mutation", body.Errors[0].Extensions["reason"])
	var out struct{ Session *struct{ ID string } }
	api.mustDo(`{ session(workspaceId: "w", id: "new") { id } }`, &out, nil)
	require.Nil(t, out.Session)
}

// gqlgen has no @stream: an unknown directive.
func TestStreamIsAnUnknownDirective(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	err := api.expectCode("GRAPHQL_VALIDATION_FAILED", `{ sessions(workspaceId: "w") @stream { edges { cursor } } }`, nil)
	require.Contains(t, err.Message, "stream")
}

func TestDeferOverWebsocketStreamsIncrementalPayloads(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 3, "")
	ws := api.dialWS(nil)
	ws.subscribe("1", deferredLatestTurn, map[string]any{"id": "s"})
	var payloads []incrementalPayload
	for range 2 {
		m := ws.read()
		require.Equal(t, "next", m.Type, "payload: %s", m.Payload)
		var p incrementalPayload
		require.NoError(t, json.Unmarshal(m.Payload, &p))
		payloads = append(payloads, p)
	}
	requireDeferredLatest(t, payloads)
	ws.complete("1")

	ws.subscribe("2", `subscription { forkOperationUpdated(workspaceId: "w", id: "x") { ... @defer { status } } }`, nil)
	m := ws.read()
	require.Equal(t, "error", m.Type, "payload: %s", m.Payload)
	errs := streamErrorOf(t, m)
	require.Len(t, errs, 1)
	require.Equal(t, "INCREMENTAL_DELIVERY_NOT_SUPPORTED", errs[0].code())
	require.Equal(t, "defer_in_subscription", errs[0].Extensions["reason"])
}

func TestDeferOverSSEStreamsIncrementalPayloads(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 3, "")
	resp := api.postGraphQL(deferredLatestTurn, map[string]any{"id": "s"}, "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var payloads []incrementalPayload
	var events []string
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		if name, ok := strings.CutPrefix(scanner.Text(), "event: "); ok {
			events = append(events, name)
		}
		data, ok := strings.CutPrefix(scanner.Text(), "data: ")
		if !ok || strings.TrimSpace(data) == "" {
			continue
		}
		var p incrementalPayload
		require.NoError(t, json.Unmarshal([]byte(data), &p))
		payloads = append(payloads, p)
	}
	require.Equal(t, []string{"next", "next", "complete"}, events)
	requireDeferredLatest(t, payloads)
}

// The limits count what a deferred fragment selects, as if it were not deferred: @defer is no
// way around them.
func TestDeferredFragmentsCountTowardLimits(t *testing.T) {
	t.Parallel()
	wide := `{ session(workspaceId: "w", id: "s") { ... @defer {` + strings.Repeat(" title", 2001) + ` } } }`
	err := limits.CheckDocument(wide, limits.Document{Overlaps: 1 << 30})
	require.NotNil(t, err)
	require.Equal(t, limits.CodeComplexityLimit, err.Extensions["code"])
	require.Equal(t, "field_limit", err.Extensions["reason"])

	api := newTestAPI(t, apiOptions{limits: func(c *resolvers.Config) { c.ComplexityLimit = 5 }})
	api.seedSession("w", "s", 1, "")
	plain := `{ session(workspaceId: "w", id: "s") { title } }`
	api.mustDo(plain, nil, nil)
	deferred := `{ session(workspaceId: "w", id: "s") { title ... @defer { id kind provider title cwd model } } }`
	resp := api.postGraphQL(deferred, nil, apolloAccept)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var body struct{ Errors []gqlError }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Len(t, body.Errors, 1)
	require.Equal(t, limits.CodeComplexityLimit, body.Errors[0].code())
}

// A fragment deferred inside a deferred fragment arrives after it, with its own path, and only
// the last payload says hasNext: false. (Turn.session is resolved concurrently, so gqlgen can
// defer it; Turn.messages is not, so it would arrive with the outer fragment: see
// TestDeferOfAnInlineFieldArrivesInTheFirstPayload.)
func TestNestedDeferArrivesInOrder(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 3, "")
	resp := api.postGraphQL(`{
		session(workspaceId: "w", id: "s") {
			title
			... @defer(label: "outer") { latestTurn { sequence ... @defer(label: "inner") { session { title } } } }
		}
	}`, nil, apolloAccept)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	payloads := multipartPayloads(t, resp)
	require.Len(t, payloads, 3)
	require.True(t, *payloads[0].HasNext)
	outer, inner := payloads[1], payloads[2]
	require.True(t, *outer.HasNext)
	require.Equal(t, "outer", outer.Incremental[0].Label)
	require.Equal(t, []any{"session"}, outer.Incremental[0].Path)
	var latest struct{ LatestTurn struct{ Sequence int } }
	require.NoError(t, json.Unmarshal(outer.Incremental[0].Data, &latest))
	require.Equal(t, 3, latest.LatestTurn.Sequence)
	require.False(t, *inner.HasNext)
	require.Equal(t, "inner", inner.Incremental[0].Label)
	require.Equal(t, []any{"session", "latestTurn"}, inner.Incremental[0].Path)
	require.JSONEq(t, `{"session":{"title":"Title of s"}}`, string(inner.Incremental[0].Data))
}

// gqlgen defers only the fields it resolves concurrently. The per-row relations the list query
// reads in line (Turn.messages, Turn.providerForkBindingAvailable, Session.forkedFrom,
// Lineage.sourceSession; models.Relations) arrive in the first payload even inside a deferred
// fragment, with their real values (the incremental-delivery RFC lets a server deliver a deferred
// fragment early), and nothing is left to follow.
func TestDeferOfAnInlineFieldArrivesInTheFirstPayload(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 3, "")
	resp := api.postGraphQL(`{
		session(workspaceId: "w", id: "s") {
			latestTurn { sequence ... @defer(label: "inline") { messages { content } } }
		}
	}`, nil, apolloAccept)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	payloads := multipartPayloads(t, resp)
	require.Len(t, payloads, 1)
	require.False(t, *payloads[0].HasNext)
	require.JSONEq(t, `{"session":{"latestTurn":{"sequence":3,"messages":[{"content":"question s-t3"},{"content":"answer s-t3"}]}}}`, string(payloads[0].Data))
}

// Issue 27: the first payload leaves out every field whose value a later payload brings, in
// lists, under fragments on an interface and nested in deferred fragments, and keeps a deferred
// field gqlgen resolves with its object (it has no later payload), a null one included.
func TestFirstPayloadLeavesDeferredFieldsOut(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 3, "")
	api.seedSession("w", "t", 2, "")
	api.seedSession("x", "e", 0, "")
	resp := api.postGraphQL(`{
		sessions(workspaceId: "w") { edges { node { id ... @defer(label: "caps") {
			title forkedFrom { sourceSessionId } lifecycleCapabilities { forkThroughTurn } turns { totalCount } } } } }
		node(id: "Session:w:s") { id ... on Session { latestTurn { sequence ... @defer(label: "state") { providerForkBindingState } } } }
		session(workspaceId: "w", id: "t") { ... @defer(label: "outer") { latestTurn { sequence ... @defer(label: "inner") { session { id } } } } }
		empty: session(workspaceId: "x", id: "e") { ... @defer(label: "none") { latestTurn { id } } }
	}`, nil, apolloAccept)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	payloads := multipartPayloads(t, resp)
	require.JSONEq(t, `{
		"sessions": {"edges": [
			{"node": {"id": "Session:w:s", "title": "Title of s", "forkedFrom": null}},
			{"node": {"id": "Session:w:t", "title": "Title of t", "forkedFrom": null}}]},
		"node": {"id": "Session:w:s", "latestTurn": {"sequence": 3}},
		"session": {},
		"empty": {}
	}`, string(payloads[0].Data))
	// Every field left out arrives later, each in its label's payload.
	items := map[string][]json.RawMessage{}
	got := map[string][]string{}
	for _, p := range payloads[1:] {
		for _, item := range p.Incremental {
			items[item.Label] = append(items[item.Label], item.Data)
			var fields map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(item.Data, &fields))
			for name := range fields {
				got[item.Label] = append(got[item.Label], name)
			}
			slices.Sort(got[item.Label])
		}
	}
	require.Equal(t, map[string][]string{
		"caps":  {"lifecycleCapabilities", "lifecycleCapabilities", "turns", "turns"},
		"state": {"providerForkBindingState"},
		"outer": {"latestTurn"},
		"inner": {"session"},
		"none":  {"latestTurn"},
	}, got)
	require.JSONEq(t, `{"latestTurn": {"sequence": 2}}`, string(items["outer"][0]),
		"a later payload leaves out what is deferred inside it too")
	require.JSONEq(t, `{"latestTurn": null}`, string(items["none"][0]), "and keeps its own fields, null ones too")
}
