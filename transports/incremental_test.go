package transports

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// deferHooks holds the deferred fragments of deferSchema until a test lets them go on.
type deferHooks struct {
	start     map[string]chan struct{} // by label: a send lets that fragment call its resolver
	release   map[string]chan struct{} // by label: a send lets that fragment's resolver return
	ran       chan string              // a fragment's resolver was called
	cancelled chan string              // a resolver whose context ended before its release
	requests  chan context.Context     // the context of each request, as the server sees it
	delivered chan string              // a fragment's result was taken by the executor's reader
}

const deferQuery = `{ hello ... @defer(label: "a") { slow } ... @defer(label: "b") { other } }`

// deferSchema answers a query with @defer as gqlgen's generated code does: the first response
// with hasNext; each fragment calls its resolver through the operation's resolver middleware;
// each later pull waits for a fragment on an unbuffered channel without watching the context,
// while the fragment gives up sending when its context ends. Fragment "b" reports an error for
// its field. Any other query answers {"hello":"world"} at once.
func deferSchema(h *deferHooks) graphql.ExecutableSchema {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		type Query { hello: String! slow: String! other: String }
		type Mutation { set: String! }
		type Subscription { ticks: String! }`})
	return &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 1, true },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			opCtx := graphql.GetOperationContext(ctx)
			if !strings.Contains(opCtx.RawQuery, "@defer") {
				return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"hello":"world"}`)})
			}
			return h.deferred(opCtx)
		},
	}
}

type fragmentResult struct {
	label string
	data  string
	errs  gqlerror.List
}

func (h *deferHooks) deferred(opCtx *graphql.OperationContext) graphql.ResponseHandler {
	results := make(chan fragmentResult)
	pending := 0
	return func(ctx context.Context) *graphql.Response {
		if pending == 0 && results != nil {
			for _, label := range []string{"a", "b"} {
				go h.fragment(ctx, opCtx, label, results)
			}
			pending = 2
			more := true
			return &graphql.Response{Data: json.RawMessage(`{"hello":"world"}`), HasNext: &more}
		}
		if pending == 0 {
			return nil
		}
		r := <-results // gqlgen waits like this, without the context
		if pending--; pending == 0 {
			results = nil
		}
		more := pending > 0
		return &graphql.Response{Data: json.RawMessage(r.data), Label: r.label, Path: ast.Path{}, Errors: r.errs, HasNext: &more}
	}
}

func (h *deferHooks) fragment(ctx context.Context, opCtx *graphql.OperationContext, label string, results chan<- fragmentResult) {
	select {
	case <-h.start[label]:
	case <-ctx.Done():
	}
	_, err := opCtx.ResolverMiddleware(ctx, func(ctx context.Context) (any, error) {
		h.ran <- label
		select {
		case <-h.release[label]:
			return "done", nil
		case <-ctx.Done():
			h.cancelled <- label
			return nil, ctx.Err()
		}
	})
	res := fragmentResult{label: label, data: `{"slow":"done"}`}
	if label == "b" {
		res.data = `{"other":null}`
		res.errs = gqlerror.List{{Message: "other failed", Path: ast.Path{ast.PathName("other")},
			Extensions: map[string]any{"code": "BOOM"}}}
	}
	if err != nil {
		res.data, res.errs = `null`, gqlerror.List{{Message: err.Error()}}
	}
	select { // as gqlgen's ProcessDeferredGroup does
	case results <- res:
		h.delivered <- label
	case <-ctx.Done():
	}
}

// resolve lets fragment label run its resolver to the end.
func (h *deferHooks) resolve(label string) {
	h.start[label] <- struct{}{}
	h.release[label] <- struct{}{}
}

// releaseAll lets fragment a resolve, then b once a's result was taken: released together, b
// could reach the executor first.
func (h *deferHooks) releaseAll() {
	h.resolve("a")
	for label := range h.delivered {
		if label == "a" {
			break
		}
	}
	h.resolve("b")
}

func newDeferServer(t *testing.T, transports ...graphql.Transport) (*deferHooks, *httptest.Server, chan struct{}) {
	t.Helper()
	hooks := &deferHooks{ran: make(chan string, 16), cancelled: make(chan string, 16), requests: make(chan context.Context, 16),
		delivered: make(chan string, 64),
		start:     map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})},
		release:   map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}}
	srv := handler.New(deferSchema(hooks))
	for _, tr := range transports {
		srv.AddTransport(tr)
	}
	served := make(chan struct{}, 1) // a handler returned
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hooks.requests <- r.Context():
		default:
		}
		srv.ServeHTTP(w, r)
		select {
		case served <- struct{}{}:
		default: // nobody counts
		}
	}))
	t.Cleanup(hs.Close)
	return hooks, hs, served
}

func postQuery(t *testing.T, ctx context.Context, url, accept, query string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// releaseAll lets fragment a resolve, then b.
const (
	wantFirst = `{"data":{"hello":"world"},"hasNext":true}`
	wantA     = `{"incremental":[{"data":{"slow":"done"},"path":[],"label":"a"}],"hasNext":true}`
	wantB     = `{"incremental":[{"errors":[{"message":"other failed","path":["other"],"extensions":{"code":"BOOM"}}],"data":{"other":null},"path":[],"label":"b"}],"hasNext":false}`
)

// The exact bytes of a multipart answer: the delimiter right after each part (so a client can
// hand it on before the next begins), the close delimiter after the one with hasNext false,
// errors of a fragment in its item.
func TestHTTPDefer_MultipartFraming(t *testing.T) {
	hooks, hs, _ := newDeferServer(t, HTTP{})
	resp := postQuery(t, context.Background(), hs.URL, "multipart/mixed;deferSpec=20220824, application/json", deferQuery)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != `multipart/mixed; boundary="-"; deferSpec=20220824` {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	part := "\r\nContent-Type: application/json; charset=utf-8\r\n\r\n"
	first := "\r\n---" + part + wantFirst + "\r\n---"
	got := make([]byte, len(first))
	if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != first {
		t.Fatalf("first part = %q (%v), want %q before any fragment resolves", got, err, first)
	}
	hooks.resolve("a")
	next := part + `{"incremental":[{"data":{"slow":"done"},"path":[],"label":`
	got = make([]byte, len(next))
	if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != next {
		t.Fatalf("second part = %q (%v), want %q", got, err, next)
	}
	hooks.resolve("b")
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body := first + string(next) + string(rest)
	want := "\r\n---" + part + wantFirst + "\r\n---" + part + wantA + "\r\n---" + part + wantB + "\r\n-----\r\n"
	if body != want {
		t.Fatalf("body =\n%q\nwant\n%q", body, want)
	}
}

// What Accept allows decides before execution: a deferred query needs multipart/mixed (406
// INCREMENTAL_DELIVERY_NOT_ACCEPTED), an operation without @defer a JSON type (406
// NOT_ACCEPTABLE); @defer in a mutation or subscription is refused on every transport.
func TestHTTPDefer_Refusals(t *testing.T) {
	_, hs, _ := newDeferServer(t, HTTP{})
	for _, c := range []struct {
		accept, query string
		status        int
		code, reason  string
	}{
		{"application/json", deferQuery, 406, CodeIncrementalNotAccepted, ""},
		{"application/graphql-response+json", deferQuery, 406, CodeIncrementalNotAccepted, ""},
		{"*/*", deferQuery, 406, CodeIncrementalNotAccepted, ""},
		{"multipart/mixed;deferSpec=20230621, application/json", deferQuery, 406, CodeIncrementalNotAccepted, ""},
		{"multipart/mixed;q=0, application/json", deferQuery, 406, CodeIncrementalNotAccepted, ""},
		{"multipart/mixed", "{ hello }", 406, CodeNotAcceptable, ""},
		{"multipart/mixed, application/graphql-response+json", `mutation { ... @defer { set } }`, 400, CodeIncrementalNotSupported, ReasonDeferInMutation},
		{"multipart/mixed, application/graphql-response+json", `subscription { ... @defer { ticks } }`, 400, CodeIncrementalNotSupported, ReasonDeferInSubscription},
		{"multipart/mixed, application/graphql-response+json", `{ hello @stream }`, 400, "GRAPHQL_VALIDATION_FAILED", ""},
	} {
		resp := postQuery(t, context.Background(), hs.URL, c.accept, c.query)
		var body struct{ Errors gqlerror.List }
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != c.status || len(body.Errors) != 1 ||
			body.Errors[0].Extensions["code"] != c.code || (c.reason != "" && body.Errors[0].Extensions["reason"] != c.reason) {
			t.Errorf("Accept %q, %s: %d %+v (%v), want %d %s %s", c.accept, c.query, resp.StatusCode, body.Errors, err, c.status, c.code, c.reason)
		}
	}
	// Without @defer, or with @defer(if: false), the answer is today's single response.
	for _, q := range []string{"{ hello }", `{ hello ... @defer(if: false) { slow } }`} {
		resp := postQuery(t, context.Background(), hs.URL, "multipart/mixed;deferSpec=20220824, application/json", q)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != mediaJSON {
			t.Errorf("%s: %d %q, want a plain JSON answer", q, resp.StatusCode, ct)
		}
	}
}

// A client that leaves mid-stream stops the operation without leaking the handler: no further
// resolver runs, the one running finishes and ends the executor's wait, and the handler returns.
func TestHTTPDefer_DisconnectStopsTheOperation(t *testing.T) {
	hooks, hs, served := newDeferServer(t, HTTP{})
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	resp := postQuery(t, ctx, hs.URL, "multipart/mixed, application/json", deferQuery)
	request := <-hooks.requests
	if _, err := bufio.NewReader(resp.Body).ReadString('}'); err != nil {
		t.Fatal(err)
	}
	hooks.start["a"] <- struct{}{}
	if label := <-hooks.ran; label != "a" {
		t.Fatalf("resolver %s ran", label)
	}
	cancel()
	<-request.Done() // the server has seen the client leave
	hooks.release["a"] <- struct{}{}
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not return after the client left")
	}
	hs.CloseClientConnections()
	settleGoroutines(t, before)
	select {
	case label := <-hooks.ran:
		t.Fatalf("resolver %s ran after the client left", label)
	default:
	}
}

// At shutdown a deferred query, which ends by itself, is finished: Shutdown waits for its last
// part instead of cutting it.
func TestHTTPDefer_ShutdownFinishesTheStream(t *testing.T) {
	hooks, hs, _ := newDeferServer(t, HTTP{})
	resp := postQuery(t, context.Background(), hs.URL, "multipart/mixed, application/json", deferQuery)
	reader := bufio.NewReader(resp.Body)
	if _, err := reader.ReadString('}'); err != nil {
		t.Fatal(err)
	}
	shutdown := make(chan error, 1)
	go func() { shutdown <- hs.Config.Shutdown(context.Background()) }()
	hooks.releaseAll()
	rest, err := io.ReadAll(reader)
	if err != nil || !strings.HasSuffix(string(rest), `"hasNext":false}`+"\r\n-----\r\n") {
		t.Fatalf("rest of the body = %q (%v)", rest, err)
	}
	if err := <-shutdown; err != nil {
		t.Fatal(err)
	}
}

// Over both websocket protocols a deferred query sends the same payloads as HTTP's parts, each
// as a result message, then complete.
func TestWebsocketDefer_IncrementalPayloads(t *testing.T) {
	hooks, hs, _ := newDeferServer(t, Websocket{})
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	for _, c := range []struct{ protocol, start, result string }{
		{SubprotocolTransportWS, "subscribe", "next"},
		{SubprotocolLegacyWS, "start", "data"},
	} {
		ws := dial(t, url, c.protocol)
		ws.send(map[string]any{"type": "connection_init"})
		ws.expect("connection_ack", "")
		ws.send(map[string]any{"id": "1", "type": c.start, "payload": map[string]any{"query": deferQuery}})
		got := []string{string(ws.expectResult(c.result).Payload)}
		hooks.releaseAll()
		got = append(got, string(ws.expectResult(c.result).Payload), string(ws.expectResult(c.result).Payload))
		ws.expect("complete", "1")
		requirePayloads(t, c.protocol, got)

		ws.send(map[string]any{"id": "2", "type": c.start, "payload": map[string]any{"query": `subscription { ... @defer { ticks } }`}})
		m := ws.expectResult("error")
		if !strings.Contains(string(m.Payload), CodeIncrementalNotSupported) {
			t.Fatalf("%s: @defer in a subscription: %s", c.protocol, m.Payload)
		}
	}
}

// expectResult reads the next message, skipping the legacy protocol's keep-alives.
func (c *client) expectResult(typ string) message {
	c.t.Helper()
	for {
		m := c.read()
		if m.Type == "ka" {
			continue
		}
		if m.Type != typ {
			c.t.Fatalf("got %s (payload %s), want %s", m.Type, m.Payload, typ)
		}
		return m
	}
}

// requirePayloads checks the three payloads of deferQuery (fragments released a, then b).
func requirePayloads(t *testing.T, where string, got []string) {
	t.Helper()
	want := []string{wantFirst, wantA, wantB}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: payloads\n%q\nwant\n%q", where, got, want)
	}
}

// Over SSE, in both modes, the payloads are those of the websocket.
func TestSSEDefer_IncrementalPayloads(t *testing.T) {
	hooks, hs, _ := newDeferServer(t, SSE{Single: &Reservations{}}, HTTP{})
	_, events := openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":`+quote(deferQuery)+`}`)
	got := []string{nextEvent(t, events).data}
	hooks.releaseAll()
	got = append(got, nextEvent(t, events).data, nextEvent(t, events).data)
	requirePayloads(t, "distinct connections", got)
	if ev := nextEvent(t, events); ev.name != "complete" {
		t.Fatalf("event = %+v, want complete", ev)
	}

	token := reserve(t, hs.URL, "")
	_, single := openReserved(t, context.Background(), hs.URL, "", token)
	startOp(t, hs.URL, "", token, "op", deferQuery)
	got = []string{string(nextSingle(t, single).Payload)}
	hooks.releaseAll()
	got = append(got, string(nextSingle(t, single).Payload), string(nextSingle(t, single).Payload))
	requirePayloads(t, "single connection", got)
	if ev := nextSingle(t, single); ev.name != "complete" || ev.ID != "op" {
		t.Fatalf("event = %+v, want complete of op", ev)
	}
	body, _ := json.Marshal(map[string]any{"query": `mutation { ... @defer { set } }`, "extensions": map[string]any{"operationId": "m"}})
	resp, text := do(t, http.MethodPost, hs.URL, "", token, string(body))
	expectCode(t, resp, text, http.StatusBadRequest, CodeIncrementalNotSupported)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// usesDefer follows gqlgen: @defer counts on fragments that are not skipped, with `if` absent or
// true (variables included), through fragment spreads.
func TestUsesDefer(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `type Query { a: String b: Query }`})
	for _, c := range []struct {
		query string
		vars  map[string]any
		want  bool
	}{
		{`{ a }`, nil, false},
		{`{ ... @defer { a } }`, nil, true},
		{`{ b { b { ... @defer(label: "x") { a } } } }`, nil, true},
		{`{ ... @defer(if: false) { a } }`, nil, false},
		{`query($d: Boolean!) { ... @defer(if: $d) { a } }`, map[string]any{"d": false}, false},
		{`query($d: Boolean!) { ... @defer(if: $d) { a } }`, map[string]any{"d": true}, true},
		{`{ ... F @defer } fragment F on Query { a }`, nil, true},
		{`{ ...F } fragment F on Query { b { ... @defer { a } } }`, nil, true},
		{`{ ... @skip(if: true) @defer { a } }`, nil, false},
		{`{ b @include(if: false) { ... @defer { a } } }`, nil, false},
	} {
		doc, errs := gqlparser.LoadQuery(schema, c.query)
		if errs != nil {
			t.Fatalf("%s: %v", c.query, errs)
		}
		opCtx := &graphql.OperationContext{Operation: doc.Operations[0], Variables: c.vars}
		if got := usesDefer(opCtx); got != c.want {
			t.Errorf("usesDefer(%s, %v) = %v, want %v", c.query, c.vars, got, c.want)
		}
	}
}

// At shutdown a stream of single-connection mode lets its deferred queries finish (their last
// payloads, then `complete`) before it ends, as distinct-connections streams do.
func TestSSEDefer_ShutdownFinishesDeferredQueries(t *testing.T) {
	hooks, hs, _ := newDeferServer(t, SSE{Single: &Reservations{}}, HTTP{})
	token := reserve(t, hs.URL, "")
	_, single := openReserved(t, context.Background(), hs.URL, "", token)
	startOp(t, hs.URL, "", token, "op", deferQuery)
	got := []string{string(nextSingle(t, single).Payload)}
	shutdown := make(chan error, 1)
	go func() { shutdown <- hs.Config.Shutdown(context.Background()) }()
	hooks.releaseAll()
	got = append(got, string(nextSingle(t, single).Payload), string(nextSingle(t, single).Payload))
	requirePayloads(t, "single connection at shutdown", got)
	if ev := nextSingle(t, single); ev.name != "complete" || ev.ID != "op" {
		t.Fatalf("event = %+v, want complete of op", ev)
	}
	if ev, open := <-single; open {
		t.Fatalf("the stream went on: %+v", ev)
	}
	if err := <-shutdown; err != nil {
		t.Fatal(err)
	}
}

// A websocket client that completes a deferred query mid-way hears nothing more of it, no
// further resolver runs, and the connection closes without waiting on the operation.
func TestWebsocketDefer_CompleteStopsTheOperation(t *testing.T) {
	hooks, hs, _ := newDeferServer(t, Websocket{})
	before := runtime.NumGoroutine()
	ws := dial(t, "ws"+strings.TrimPrefix(hs.URL, "http"), SubprotocolTransportWS)
	ws.initialise()
	ws.subscribe("1", deferQuery)
	if m := ws.expect("next", "1"); string(m.Payload) != wantFirst {
		t.Fatalf("first payload = %s", m.Payload)
	}
	ws.send(map[string]any{"id": "1", "type": "complete"})
	ws.expectQuiet() // the complete has been read, so the operation's context has ended
	// Fragment a goes on as gqlgen's would, without calling its resolver; its result ends the
	// executor's wait, and then b sees the execution cancelled.
	hooks.start["a"] <- struct{}{}
	ws.expectQuiet()
	ws.conn.Close()
	hs.CloseClientConnections()
	settleGoroutines(t, before)
	select {
	case label := <-hooks.ran:
		t.Fatalf("resolver %s ran after complete", label)
	default:
	}
}
