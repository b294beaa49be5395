package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler/testserver"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/forkgraph/forkgraph/transports"
)

type subjectKey struct{}

// An operation's span carries its caller's subject as enduser.id and its log line as subject;
// a caller without one adds neither.
func TestOperationsNameTheirSubject(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	var logs bytes.Buffer
	tel := New(Options{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter)),
		Logger:  slog.New(slog.NewJSONHandler(&logs, nil)),
		Subject: func(ctx context.Context) string { s, _ := ctx.Value(subjectKey{}).(string); return s }})
	ts := testserver.New()
	ts.Use(tel.GraphQL())
	ts.AddTransport(transports.HTTP{})
	hs := httptest.NewServer(tel.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if who := r.Header.Get("X-Test-Subject"); who != "" {
			r = r.WithContext(context.WithValue(r.Context(), subjectKey{}, who))
		}
		ts.ServeHTTP(w, r)
	}), func(*http.Request) string { return "req" }))
	defer hs.Close()
	for _, who := range []string{"alice", ""} {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"query":"query Who { name }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Test-Subject", who)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	spans := exporter.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	subjects := []string{}
	for _, s := range spans {
		got := ""
		for _, a := range s.Attributes {
			if a.Key == "enduser.id" {
				got = a.Value.AsString()
			}
		}
		subjects = append(subjects, got)
	}
	if subjects[0] != "alice" || subjects[1] != "" {
		t.Fatalf("enduser.id of the two spans = %q, want alice and none", subjects)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"subject":"alice"`) || strings.Contains(lines[1], `"subject"`) {
		t.Fatalf("log lines:\n%s", logs.String())
	}
}
