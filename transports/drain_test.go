package transports

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Issue 10: at shutdown an SSE stream was cut without `complete`. Now Shutdown ends it with
// `complete` (its operation cancelled) and returns once its handler has, within the grace
// period, so the client can tell a drain from a failure.
func TestSSE_ShutdownEndsStreamsWithComplete(t *testing.T) {
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(SSE{})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	_, events := openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":"subscription { held }"}`)
	<-hooks.started
	shutdown := make(chan error, 1)
	go func() { shutdown <- hs.Config.Shutdown(context.Background()) }()
	if ev := nextEvent(t, events); ev.name != "complete" {
		t.Fatalf("event = %+v, want complete", ev)
	}
	<-hooks.cancelled
	if _, open := <-events; open {
		t.Fatal("the stream went on after complete")
	}
	if err := <-shutdown; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}

// A stream on a server that is not shutting down is unaffected by another server's shutdown.
func TestSSE_ShutdownOfAnotherServerLeavesStreams(t *testing.T) {
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(SSE{})
	a := httptest.NewServer(srv)
	t.Cleanup(a.Close)
	b := httptest.NewServer(http.NotFoundHandler())
	_, events := openStream(t, context.Background(), http.MethodPost, a.URL, `{"query":"subscription { ticks(n: 2, size: 1) }"}`)
	if err := b.Config.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Close()
	for _, want := range []string{"next", "next", "complete"} {
		if ev := nextEvent(t, events); ev.name != want {
			t.Fatalf("event = %+v, want %s", ev, want)
		}
	}
}
