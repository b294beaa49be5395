package transports

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/testserver"
)

type sseEvent struct{ name, data string }

// readEvents parses a text/event-stream body into events until it ends.
func readEvents(t *testing.T, resp *http.Response, events chan<- sseEvent) {
	t.Helper()
	defer close(events)
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	var ev sseEvent
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case line == "":
			if ev.name != "" {
				events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data:"):
			ev.data = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
}

func openStream(t *testing.T, ctx context.Context, method, base, body string) (*http.Response, chan sseEvent) {
	t.Helper()
	target := base
	var req *http.Request
	var err error
	if method == http.MethodGet {
		req, err = http.NewRequestWithContext(ctx, method, target+"?"+url.Values{"query": {body}}.Encode(), nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan sseEvent, 16)
	if resp.StatusCode == http.StatusOK {
		go readEvents(t, resp, events)
	}
	return resp, events
}

func nextEvent(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("stream ended early")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return sseEvent{}
}

func TestSSE_SubscriptionStreamsNextThenComplete(t *testing.T) {
	ts := testserver.New()
	ts.AddTransport(SSE{})
	hs := httptest.NewServer(ts)
	defer hs.Close()

	resp, events := openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":"subscription { name }"}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("Content-Type = %q", ct)
	}
	ts.SendNextSubscriptionMessage()
	if ev := nextEvent(t, events); ev.name != "next" || ev.data != `{"data":{"name":"test"}}` {
		t.Fatalf("event = %+v", ev)
	}
	ts.SendNextSubscriptionMessage()
	nextEvent(t, events)
	ts.SendCompleteSubscriptionMessage()
	if ev := nextEvent(t, events); ev.name != "complete" || ev.data != "" {
		t.Fatalf("event = %+v", ev)
	}
}

func TestSSE_QueryOverGETAndValidationErrorsAsEvents(t *testing.T) {
	ts := testserver.New()
	ts.AddTransport(SSE{})
	hs := httptest.NewServer(ts)
	defer hs.Close()

	_, events := openStream(t, context.Background(), http.MethodGet, hs.URL, "{ name }")
	if ev := nextEvent(t, events); ev.name != "next" || !strings.Contains(ev.data, `"name":"test"`) {
		t.Fatalf("event = %+v", ev)
	}
	if ev := nextEvent(t, events); ev.name != "complete" {
		t.Fatalf("event = %+v", ev)
	}

	resp, events := openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":"subscription { nope }"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("validation errors must arrive in the stream, got HTTP %d", resp.StatusCode)
	}
	if ev := nextEvent(t, events); ev.name != "next" || !strings.Contains(ev.data, `"errors"`) {
		t.Fatalf("event = %+v", ev)
	}
	nextEvent(t, events) // complete

	resp, _ = openStream(t, context.Background(), http.MethodGet, hs.URL, "mutation { name }")
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("mutation over GET: %d Allow=%q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	resp, _ = openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed body: %d", resp.StatusCode)
	}
}

func TestSSE_SubscriptionErrorAndDisconnect(t *testing.T) {
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(SSE{KeepAlive: 10 * time.Millisecond})
	hs := httptest.NewServer(srv)
	defer hs.Close()

	_, events := openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":"subscription { failing }"}`)
	nextEvent(t, events)
	if ev := nextEvent(t, events); ev.name != "next" || !strings.Contains(ev.data, "RESUME_REQUIRED") {
		t.Fatalf("event = %+v", ev)
	}
	if ev := nextEvent(t, events); ev.name != "complete" {
		t.Fatalf("event = %+v", ev)
	}

	ctx, cancel := context.WithCancel(context.Background())
	openStream(t, ctx, http.MethodPost, hs.URL, `{"query":"subscription { held }"}`)
	<-hooks.started
	cancel() // the client closes the connection: that is how SSE subscriptions end
	select {
	case <-hooks.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the stream did not cancel the operation")
	}
}

func TestSSE_EveryResultIntactWhenTheResolverReusesItsBuffer(t *testing.T) {
	srv := streamHandler(streamSchema(newStreamHooks()))
	srv.AddTransport(SSE{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	_, events := openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":"subscription { ticks(n: 200, size: 8) }"}`)
	for i := 1; i <= 200; i++ {
		want := fmt.Sprintf(`{"data":{"ticks":"%d xxxxxxxx"}}`, i)
		if ev := nextEvent(t, events); ev.data != want {
			t.Fatalf("event %d = %s, want %s", i, ev.data, want)
		}
	}
	if ev := nextEvent(t, events); ev.name != "complete" {
		t.Fatalf("event = %+v", ev)
	}
}
