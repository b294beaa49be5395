package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/streamside"
)

// streamHooks lets a test watch the resolvers of streamSchema.
type streamHooks struct {
	mu        sync.Mutex
	running   int
	started   chan string // each time a held stream starts
	cancelled chan string // each time a held stream's context ends
	produced  chan int    // ticks: number of responses produced when the stream ended
}

func newStreamHooks() *streamHooks {
	return &streamHooks{started: make(chan string, 100), cancelled: make(chan string, 100), produced: make(chan int, 100)}
}

func (h *streamHooks) Running() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running
}

// streamSchema is a hand-made executable schema (no codegen) whose subscriptions misbehave on
// purpose: floods, mid-stream errors, unencodable results, panics, streams that never end.
func streamSchema(h *streamHooks) graphql.ExecutableSchema {
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		type Query { hello: String! }
		type Subscription {
			ticks(n: Int!, size: Int!): String!
			failing: String!
			held: String!
			broken: String!
			explode: String!
		}`})
	return &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 1, true },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			opCtx := graphql.GetOperationContext(ctx)
			field := opCtx.Operation.SelectionSet[0].(*ast.Field)
			if opCtx.Operation.Operation == ast.Query {
				return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"hello":"world"}`)})
			}
			return h.stream(ctx, field.Name, field.ArgumentMap(opCtx.Variables))
		},
	}
}

// streamHandler serves schema as resolvers.NewServer does for streams: each operation gets a
// streamside.Stream, made before the schema executes, that its stream fills in and the
// transport reads.
func streamHandler(schema graphql.ExecutableSchema) *handler.Server {
	srv := handler.New(schema)
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		ctx, _ = streamside.With(ctx)
		return next(ctx)
	})
	return srv
}

func (h *streamHooks) stream(ctx context.Context, name string, args map[string]any) graphql.ResponseHandler {
	switch name {
	case "ticks":
		return h.ticks(ctx, toInt(args["n"]), toInt(args["size"]))
	case "failing":
		sent := false
		return func(ctx context.Context) *graphql.Response {
			if sent {
				streamside.Of(ctx).End(&gqlerror.Error{Message: "fell behind: resume from your last cursor",
					Extensions: map[string]any{"code": "RESUME_REQUIRED"}})
				return nil
			}
			sent = true
			return &graphql.Response{Data: json.RawMessage(`{"failing":"first"}`)}
		}
	case "held":
		return h.held(ctx)
	case "broken":
		return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"broken":`)})
	default: // explode
		return func(context.Context) *graphql.Response { panic("resolver exploded") }
	}
}

func (h *streamHooks) ticks(ctx context.Context, n, size int) graphql.ResponseHandler {
	var i atomic.Int64
	var once sync.Once
	ended := func() { once.Do(func() { h.produced <- int(i.Load()) }) }
	context.AfterFunc(ctx, ended) // the transport gave up on the stream
	padding := strings.Repeat("x", size)
	var buf bytes.Buffer // reused for every response, as generated subscription code does
	return func(context.Context) *graphql.Response {
		if int(i.Load()) == n || ctx.Err() != nil {
			ended()
			return nil
		}
		i.Add(1)
		buf.Reset()
		fmt.Fprintf(&buf, `{"ticks":"%d %s"}`, i.Load(), padding)
		return &graphql.Response{Data: buf.Bytes()}
	}
}

func (h *streamHooks) held(ctx context.Context) graphql.ResponseHandler {
	h.mu.Lock()
	h.running++
	h.mu.Unlock()
	h.started <- "held"
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		h.running--
		h.mu.Unlock()
		h.cancelled <- "held"
	})
	return func(context.Context) *graphql.Response {
		<-ctx.Done()
		return nil
	}
}

func toInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	case int:
		return n
	}
	return 0
}

func newStreamServer(t *testing.T, ws Websocket) (*streamHooks, string) {
	t.Helper()
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(ws)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hooks, "ws" + strings.TrimPrefix(hs.URL, "http")
}

// client is a raw gorilla websocket client with helpers for protocol messages.
type client struct {
	t    *testing.T
	conn *websocket.Conn
}

func dial(t *testing.T, url string, protocols ...string) *client {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn}
}

func (c *client) sendRaw(s string) {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(b))
}

// message is a decoded server message.
type message struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

func (c *client) read() message {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m message
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatalf("decode %s: %v", data, err)
	}
	return m
}

func (c *client) expect(typ, id string) message {
	c.t.Helper()
	m := c.read()
	if m.Type != typ || m.ID != id {
		c.t.Fatalf("got %s (id %q, payload %s), want %s (id %q)", m.Type, m.ID, m.Payload, typ, id)
	}
	return m
}

// expectClose reads until the server's close frame and checks its code and reason.
func (c *client) expectClose(code int, reason string) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, data, err := c.conn.ReadMessage()
		if err == nil {
			c.t.Logf("message before close: %s", data)
			continue
		}
		var ce *websocket.CloseError
		if !asCloseError(err, &ce) {
			c.t.Fatalf("want close %d %q, got %v", code, reason, err)
		}
		if ce.Code != code || (reason != "" && ce.Text != reason) {
			c.t.Fatalf("close = %d %q, want %d %q", ce.Code, ce.Text, code, reason)
		}
		return
	}
}

// expectCloseNow requires the very next frame to be the server's close frame.
func (c *client) expectCloseNow(code int, reason string) {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := c.conn.ReadMessage()
	var ce *websocket.CloseError
	if err == nil || !asCloseError(err, &ce) {
		c.t.Fatalf("want close %d %q, got message %s, error %v", code, reason, data, err)
	}
	if ce.Code != code || ce.Text != reason {
		c.t.Fatalf("close = %d %q, want %d %q", ce.Code, ce.Text, code, reason)
	}
}

func asCloseError(err error, target **websocket.CloseError) bool {
	return errors.As(err, target)
}

// initialise performs connection_init / connection_ack.
func (c *client) initialise() {
	c.t.Helper()
	c.send(map[string]any{"type": "connection_init"})
	c.expect("connection_ack", "")
}

func (c *client) subscribe(id, query string) {
	c.t.Helper()
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query}})
}

// expectQuiet proves nothing is pending for the connection: a ping must be answered by the very
// next message.
func (c *client) expectQuiet() {
	c.t.Helper()
	c.send(map[string]any{"type": "ping", "payload": map[string]any{"probe": true}})
	c.expect("pong", "")
}

// settleGoroutines waits until the goroutine count is back to at most want.
func settleGoroutines(t *testing.T, want int) {
	t.Helper()
	if await.Poll(context.Background(), 5*time.Second, func() (bool, error) { return runtime.NumGoroutine() <= want, nil }) != nil {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
	}
}
