package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/trace"
)

const testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestWebsocketInitAcceptsTraceparent(t *testing.T) {
	tel := New(Options{})
	var seen trace.SpanContext
	init := tel.WebsocketInit(func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error) {
		seen = trace.SpanContextFromContext(ctx)
		return ctx, nil, nil
	})
	if _, _, err := init(context.Background(), map[string]any{"traceparent": testTraceparent, "authorization": "x"}); err != nil {
		t.Fatal(err)
	}
	if seen.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || !seen.IsRemote() {
		t.Fatalf("span context = %v, want the payload's remote parent", seen)
	}
	ctx, _, err := tel.WebsocketInit(nil)(context.Background(), nil)
	if err != nil || trace.SpanContextFromContext(ctx).IsValid() {
		t.Fatal("no payload: no parent, and a nil InitFunc accepts")
	}
}

func TestHTTPTransportSendsTraceparent(t *testing.T) {
	tel := New(Options{})
	var got string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header.Get("Traceparent") }))
	defer hook.Close()
	client := &http.Client{Transport: tel.HTTPTransport(nil)}
	parent := tel.propagator.Extract(context.Background(), mapCarrier{"traceparent": testTraceparent})
	req, _ := http.NewRequestWithContext(parent, http.MethodPost, hook.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got != testTraceparent {
		t.Fatalf("adapter saw traceparent %q, want %q", got, testTraceparent)
	}
	if req.Header.Get("Traceparent") != "" {
		t.Fatal("the caller's request was modified")
	}
}

type mapCarrier map[string]string

func (m mapCarrier) Get(k string) string { return m[k] }
func (m mapCarrier) Set(k, v string)     { m[k] = v }
func (m mapCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func TestHTTPMiddlewareLogsOneLinePerRequest(t *testing.T) {
	var out bytes.Buffer
	logger, err := NewLogger(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	tel := New(Options{Logger: logger})
	h := tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !trace.SpanContextFromContext(r.Context()).IsRemote() {
			t.Error("the handler runs in the caller's trace")
		}
		recordFrom(r.Context()).setOperation("query", "Q", "OK", "alice")
		w.WriteHeader(http.StatusTeapot)
	}), func(*http.Request) string { return "req-1" })
	req := httptest.NewRequest(http.MethodGet, "/graphql?query=secret&variables=secret", nil)
	req.Header.Set("Traceparent", testTraceparent)
	h.ServeHTTP(httptest.NewRecorder(), req)

	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("one JSON line, got %q: %v", out.String(), err)
	}
	for k, want := range map[string]any{"msg": "http request", "requestId": "req-1", "path": "/graphql",
		"status": float64(418), "operation": "Q", "type": "query", "outcome": "OK", "subject": "alice"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %v", k, line[k], want)
		}
	}
	if strings.Contains(out.String(), "secret") {
		t.Errorf("the query string was logged: %s", out.String())
	}
	if got := testutil.ToFloat64(tel.Metrics.httpResponses.WithLabelValues("418")); got != 1 {
		t.Fatalf("responses{418} = %v", got)
	}
}

// A refusal made before GraphQL runs (the edge's 403 for a Host, a transport's 415) is counted
// in forkgraph_graphql_errors_total by its code, and its code is the request line's outcome;
// a response the GraphQL extension already counted (its record holds the operation) is not
// counted twice.
func TestHTTPMiddlewareCountsRefusalsGraphQLNeverSaw(t *testing.T) {
	var out bytes.Buffer
	logger, err := NewLogger(&out, "json", "info")
	if err != nil {
		t.Fatal(err)
	}
	tel := New(Options{Logger: logger})
	h := tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/host":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"errors":[{"message":"no","extensions":{"code":"HOST_NOT_ALLOWED"}}]}`))
		case "/graphql":
			recordFrom(r.Context()).setOperation("unknown", "invalid", "GRAPHQL_PARSE_FAILED", "")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"errors":[{"message":"no","extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}`))
		case "/plain":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte("not json"))
		}
	}), func(*http.Request) string { return "req-1" })
	for _, path := range []string{"/host", "/host", "/graphql", "/plain"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	for code, want := range map[string]float64{"HOST_NOT_ALLOWED": 2, "GRAPHQL_PARSE_FAILED": 0, "UNKNOWN": 0} {
		if got := testutil.ToFloat64(tel.Metrics.graphqlErrors.WithLabelValues(code)); got != want {
			t.Errorf("errors{%s} = %v, want %v", code, got, want)
		}
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	var line map[string]any
	if err := json.Unmarshal([]byte(first), &line); err != nil {
		t.Fatal(err)
	}
	if line["status"] != float64(403) || line["outcome"] != "HOST_NOT_ALLOWED" {
		t.Errorf("the refusal's line = %v, want status 403 and outcome HOST_NOT_ALLOWED", line)
	}
}

func TestDebugLogCoversTheOtherRoutes(t *testing.T) {
	var out bytes.Buffer
	logger, err := NewLogger(&out, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	tel := New(Options{Logger: logger})
	h := tel.DebugLog(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }), "/graphql")
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/readyz?x=secret", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/graphql", nil))
	var line map[string]any
	if err := json.Unmarshal(out.Bytes(), &line); err != nil {
		t.Fatalf("exactly one JSON line (the /graphql request is HTTP's to log), got %q: %v", out.String(), err)
	}
	if line["level"] != "DEBUG" || line["path"] != "/readyz" || line["status"] != float64(204) || strings.Contains(out.String(), "secret") {
		t.Fatalf("line = %v", line)
	}
}

// A websocket's own refusals (transports.Observer.Refused) are counted with GraphQL's errors.
func TestTransportRefusalsAreCountedAsErrors(t *testing.T) {
	tel := New(Options{})
	observer := tel.Transports()
	observer.Refused("graphql-transport-ws", "TOO_MANY_SUBSCRIPTIONS")
	observer.Refused("graphql-ws", "")
	for code, want := range map[string]float64{"TOO_MANY_SUBSCRIPTIONS": 1, "UNKNOWN": 1} {
		if got := testutil.ToFloat64(tel.Metrics.graphqlErrors.WithLabelValues(code)); got != want {
			t.Errorf("errors{%s} = %v, want %v", code, got, want)
		}
	}
}
