package telemetry

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/transports"
)

// laggedEnd ends every stream with a RESUME_REQUIRED error, as resolvers do for a subscriber
// that fell behind: the error is added to the last (nil) response.
type laggedEnd struct{}

func (laggedEnd) ExtensionName() string                   { return "lagged end" }
func (laggedEnd) Validate(graphql.ExecutableSchema) error { return nil }
func (laggedEnd) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		graphql.AddError(ctx, &gqlerror.Error{Message: "fell behind", Extensions: map[string]any{"code": "RESUME_REQUIRED"}})
	}
	return resp
}

func TestGraphQLExtensionFollowsASubscription(t *testing.T) {
	tel := New(Options{Logger: slog.New(slog.DiscardHandler)})
	ts := testserver.New()
	ts.Use(tel.GraphQL())
	ts.Use(laggedEnd{})
	ts.AddTransport(transports.Websocket{Observer: tel.Transports()})
	hs := httptest.NewServer(ts)
	defer hs.Close()

	conn, resp, err := (&websocket.Dialer{Subprotocols: []string{transports.SubprotocolTransportWS}}).
		Dial("ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	defer conn.Close()
	read := func(want string) {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		var m struct{ Type string }
		if err := conn.ReadJSON(&m); err != nil || m.Type != want {
			t.Fatalf("read %q (%v), want %s", m.Type, err, want)
		}
	}
	_ = conn.WriteJSON(map[string]any{"type": "connection_init"})
	read("connection_ack")
	_ = conn.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription Watch { name }"}})
	ts.SendNextSubscriptionMessage()
	read("next")
	if got := testutil.ToFloat64(tel.Metrics.subscriptions.WithLabelValues("Watch")); got != 1 {
		t.Fatalf("active subscriptions = %v, want 1 while it runs", got)
	}
	ts.SendCompleteSubscriptionMessage()
	read("complete")

	m := tel.Metrics
	for name, got := range map[string]float64{
		"events":                   testutil.ToFloat64(m.subscriptionSent.WithLabelValues("Watch")),
		"resume required":          testutil.ToFloat64(m.resumeRequired.WithLabelValues("Watch")),
		"requests RESUME_REQUIRED": testutil.ToFloat64(m.graphqlRequests.WithLabelValues("subscription", "Watch", "RESUME_REQUIRED")),
		"errors RESUME_REQUIRED":   testutil.ToFloat64(m.graphqlErrors.WithLabelValues("RESUME_REQUIRED")),
	} {
		if got != 1 {
			t.Errorf("%s = %v, want 1", name, got)
		}
	}
	if got := testutil.ToFloat64(m.subscriptions.WithLabelValues("Watch")); got != 0 {
		t.Errorf("active subscriptions = %v after the end", got)
	}

	_ = conn.WriteJSON(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": "subscription { nope }"}})
	read("error")
	if got := testutil.ToFloat64(m.graphqlRequests.WithLabelValues("unknown", invalidOperation, "GRAPHQL_VALIDATION_FAILED")); got != 1 {
		t.Errorf("a refused operation is counted as invalid, got %v", got)
	}
}

func TestAnOperationWhoseClientLeftIsFinished(t *testing.T) {
	tel := New(Options{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(graphql.WithOperationContext(context.Background(),
		&graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Query, Name: "Q"}}))
	_ = tel.GraphQL().(graphql.OperationInterceptor).InterceptOperation(ctx, func(context.Context) graphql.ResponseHandler {
		return func(context.Context) *graphql.Response { return &graphql.Response{} }
	})
	cancel() // the client left; the response handler is never called
	counted := tel.Metrics.graphqlRequests.WithLabelValues("query", "Q", outcomeCanceled)
	// context.AfterFunc runs on its own goroutine
	await.Until(t, 5*time.Second, "the operation to be finished", func() bool { return testutil.ToFloat64(counted) == 1 })
}
