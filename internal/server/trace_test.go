package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/forkgraph/forkgraph/internal/servertest"
	"github.com/forkgraph/forkgraph/telemetry"
)

// keptSpans is the SDK's in-memory exporter, except that shutting the provider down (the
// server's shutdown) keeps the spans for the test to read.
type keptSpans struct{ *tracetest.InMemoryExporter }

func (keptSpans) Shutdown(context.Context) error { return nil }

// traceAdapter is a webhook provider adapter (docs/providers.md, host_copy) that records the
// traceparent header of every /fork call.
type traceAdapter struct {
	mu           sync.Mutex
	forkParents  []string
	describeSeen int
}

func (a *traceAdapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/describe":
		a.mu.Lock()
		a.describeSeen++
		a.mu.Unlock()
		_, _ = w.Write([]byte(`{"kind":"trace-test","version":"1","stateBindingMode":"host_copy","throughTurn":true}`))
	case "/probe":
		probes, _ := body["probes"].([]any)
		answers := make([]bool, len(probes))
		for i := range answers {
			answers[i] = true
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"forkable": answers})
	case "/fork":
		a.mu.Lock()
		a.forkParents = append(a.forkParents, r.Header.Get("Traceparent"))
		a.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"disposition": "accepted", "providerSessionId": "child-" + r.Header.Get("Forkgraph-Operation-Id")})
	default:
		http.NotFound(w, r)
	}
}

// The caller's trace ids: the HTTP request's and the websocket connection_init's.
const (
	requestTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	requestTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	requestParentID    = "00f067aa0ba902b7"
	initTraceparent    = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	initTraceID        = "0af7651916cd43dd8448eb211c80319c"
)

func TestTraceOfOneFork(t *testing.T) {
	t.Parallel()
	exporter := keptSpans{tracetest.NewInMemoryExporter()}
	inMemory := func(context.Context, func(string) string, telemetry.Build) (trace.TracerProvider, func(context.Context) error, error) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
		return tp, tp.Shutdown, nil
	}
	adapter := &traceAdapter{}
	hook := httptest.NewServer(adapter)
	t.Cleanup(hook.Close)

	srv := servertest.StartWith(t, servertest.Options{NewTracerProvider: inMemory}, servertest.SQLite(t), "-no-seed", "-webhook-url", hook.URL)
	base, stop := srv.URL, srv.Stop
	c := srv.Client(t, "")
	c.Must(`mutation { reportSession(input: {workspaceId: "w", id: "s", provider: "webhook", providerSessionId: "p-s"}) { id } }`, nil, nil)
	c.Must(`mutation { reportTurn(input: {workspaceId: "w", sessionId: "s", id: "t1", phase: SETTLED, outcome: COMPLETED,
		providerTurnId: "p-t1", providerTurnBinding: {n: 1}}) { id } }`, nil, nil)
	traced := servertest.Client{T: t, Base: base, Header: http.Header{"Traceparent": {requestTraceparent}}}
	var fork struct{ ForkSession struct{ ID string } }
	traced.Must(`mutation Fork { forkSession(input: {workspaceId: "w", sourceSessionId: "s", throughTurnId: "t1", requestId: "r1"}) { id } }`, nil, &fork)
	phases := c.FollowFork("w", fork.ForkSession.ID, map[string]any{"traceparent": initTraceparent})
	require.Equal(t, "COMMITTED", phases[len(phases)-1])
	c.Must(`query Graph { sessions(workspaceId: "w") { edges { node { latestTurn { id } } } } }`, nil, nil)
	require.NoError(t, stop(), "shutdown waits for the background work, so its spans have ended")

	spans := exporter.GetSpans()
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	find := func(name string, in func(tracetest.SpanStub) bool) tracetest.SpanStub {
		t.Helper()
		for _, s := range spans {
			if s.Name == name && in(s) {
				return s
			}
		}
		t.Fatalf("no span %q among %d", name, len(spans))
		return tracetest.SpanStub{}
	}
	anySpan := func(tracetest.SpanStub) bool { return true }
	descends := func(s tracetest.SpanStub, ancestor trace.SpanID) bool {
		for s.Parent.IsValid() {
			if s.Parent.SpanID() == ancestor {
				return true
			}
			s = byID[s.Parent.SpanID()]
		}
		return false
	}

	mutation := find("mutation Fork", anySpan)
	require.Equal(t, requestTraceID, mutation.SpanContext.TraceID().String(), "the mutation continues the caller's trace")
	require.Equal(t, requestParentID, mutation.Parent.SpanID().String())
	require.True(t, mutation.Parent.IsRemote())
	find("store.update", func(s tracetest.SpanStub) bool { return s.Parent.SpanID() == mutation.SpanContext.SpanID() })
	find("driver.probe", func(s tracetest.SpanStub) bool { return s.Parent.SpanID() == mutation.SpanContext.SpanID() })

	work := find("fork.process", anySpan)
	require.False(t, work.Parent.IsValid(), "the background work is a trace of its own")
	require.NotEqual(t, mutation.SpanContext.TraceID(), work.SpanContext.TraceID())
	require.Len(t, work.Links, 1)
	require.Equal(t, mutation.SpanContext.SpanID(), work.Links[0].SpanContext.SpanID(), "linked to the mutation that started it")
	require.Equal(t, mutation.SpanContext.TraceID(), work.Links[0].SpanContext.TraceID())

	underWork := func(s tracetest.SpanStub) bool { return descends(s, work.SpanContext.SpanID()) }
	dispatch := find("driver.fork", underWork)
	find("driver.describe", underWork) // the re-check right before dispatch
	updates := 0
	for _, s := range spans {
		if s.Name == "store.update" && underWork(s) {
			updates++
		}
	}
	require.GreaterOrEqual(t, updates, 2, "dispatching and the commit are transactions of the background work")

	adapter.mu.Lock()
	require.Len(t, adapter.forkParents, 1)
	parts := strings.Split(adapter.forkParents[0], "-")
	adapter.mu.Unlock()
	require.Len(t, parts, 4, "a W3C traceparent")
	require.Equal(t, work.SpanContext.TraceID().String(), parts[1], "the webhook call carries the background trace")
	require.Equal(t, dispatch.SpanContext.SpanID().String(), parts[2], "whose parent is the driver.fork span")

	graph := find("query Graph", anySpan)
	batch := find("dataloader.latestTurn", func(s tracetest.SpanStub) bool { return descends(s, graph.SpanContext.SpanID()) })
	require.Contains(t, batch.Attributes, attribute.Int("forkgraph.batch.keys", 2), "the source and the fork's target")

	subscription := find("subscription Follow", anySpan)
	require.Equal(t, initTraceID, subscription.SpanContext.TraceID().String(), "connection_init's traceparent")

	for _, s := range spans {
		if s.SpanContext.TraceID() == work.SpanContext.TraceID() || s.SpanContext.TraceID() == mutation.SpanContext.TraceID() {
			t.Logf("%s trace %s span %s parent %s", s.Name, s.SpanContext.TraceID(), s.SpanContext.SpanID(), s.Parent.SpanID())
		}
	}
}
