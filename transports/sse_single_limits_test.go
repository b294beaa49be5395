package transports

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/await"
)

// Requests without a reservation, with another's Authorization, or without an operationId are
// refused with the spec's status and a code; a second GET of a stream is 409.
func TestSSESingle_RefusedRequests(t *testing.T) {
	_, hs := singleServer(t, &Reservations{})
	const auth = "Bearer alpha"
	token := reserve(t, hs.URL, auth)
	op := `{"query":"{ hello }","extensions":{"operationId":"a"}}`
	for _, c := range []struct {
		name, method, target, auth, token, body string
		status                                  int
		code                                    string
	}{
		{"POST unknown token", http.MethodPost, hs.URL, auth, "nope", op, http.StatusNotFound, CodeNotFound},
		{"POST other Authorization", http.MethodPost, hs.URL, "Bearer beta", token, op, http.StatusNotFound, CodeNotFound},
		{"POST no Authorization", http.MethodPost, hs.URL, "", token, op, http.StatusNotFound, CodeNotFound},
		{"POST no operationId", http.MethodPost, hs.URL, auth, token, `{"query":"{ hello }"}`, http.StatusBadRequest, CodeBadRequest},
		{"POST bad JSON", http.MethodPost, hs.URL, auth, token, `{`, http.StatusBadRequest, CodeBadRequest},
		{"DELETE no token", http.MethodDelete, hs.URL + "?operationId=a", auth, "", "", http.StatusNotFound, CodeNotFound},
		{"DELETE other Authorization", http.MethodDelete, hs.URL + "?operationId=a", "", token, "", http.StatusNotFound, CodeNotFound},
		{"DELETE no operationId", http.MethodDelete, hs.URL, auth, token, "", http.StatusBadRequest, CodeBadRequest},
	} {
		resp, body := do(t, c.method, c.target, c.auth, c.token, c.body)
		t.Run(c.name, func(t *testing.T) { expectCode(t, resp, body, c.status, c.code) })
	}
	for _, c := range []struct{ name, auth, token string }{{"unknown token", auth, "nope"}, {"other Authorization", "Bearer beta", token}} {
		resp, _ := openReserved(t, context.Background(), hs.URL, c.auth, c.token)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET with %s = %d, want 404", c.name, resp.StatusCode)
		}
	}
	if resp, _ := openReserved(t, context.Background(), hs.URL, auth, token); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d", resp.StatusCode)
	}
	resp, _ := openReserved(t, context.Background(), hs.URL, auth, token)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("second GET = %d, want 409", resp.StatusCode)
	}
	// Without Single, a PUT is not served by SSE (HTTP answers 405, as before).
	plain := newPlainSSE(t)
	if resp, _ := do(t, http.MethodPut, plain, "", "", ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT without Single = %d, want 405", resp.StatusCode)
	}
}

func newPlainSSE(t *testing.T) string {
	t.Helper()
	_, hs := singleServer(t, nil)
	return hs.URL
}

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	await.Until(t, 5*time.Second, what, cond)
}

// A reservation whose stream never opens expires, cancelling the operation waiting for it; an
// opened one does not.
func TestSSESingle_UnopenedReservationsExpire(t *testing.T) {
	res := &Reservations{TTL: 100 * time.Millisecond}
	hooks, hs := singleServer(t, res)
	kept := reserve(t, hs.URL, "")
	_, events := openReserved(t, context.Background(), hs.URL, "", kept)
	lapsed := reserve(t, hs.URL, "")
	startOp(t, hs.URL, "", lapsed, "waiting", "subscription { held }")
	<-hooks.started
	<-hooks.cancelled // the expiry cancelled it
	waitFor(t, "the unopened reservation to go", func() bool { return res.Len() == 1 })
	if resp, _ := openReserved(t, context.Background(), hs.URL, "", lapsed); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET of an expired reservation = %d, want 404", resp.StatusCode)
	}
	startOp(t, hs.URL, "", kept, "still", "{ hello }")
	if ev := nextSingle(t, events); ev.ID != "still" {
		t.Fatalf("event = %+v", ev)
	}
}

// Reservations are bounded per client (as ClientKey names it; here the Authorization, as an edge
// that has authenticated it would) and overall: over a bound a PUT is 429 TOO_MANY_RESERVATIONS;
// a closed stream frees its place.
func TestSSESingle_ReservationBounds(t *testing.T) {
	res := &Reservations{MaxPerClient: 2, MaxTotal: 3, ClientKey: func(r *http.Request) string { return r.Header.Get("Authorization") }}
	_, hs := singleServer(t, res)
	reserve(t, hs.URL, "Bearer a")
	first := reserve(t, hs.URL, "Bearer a")
	resp, body := do(t, http.MethodPut, hs.URL, "Bearer a", "", "")
	expectCode(t, resp, body, http.StatusTooManyRequests, CodeTooManyReservations)
	reserve(t, hs.URL, "Bearer b")
	resp, body = do(t, http.MethodPut, hs.URL, "Bearer c", "", "")
	expectCode(t, resp, body, http.StatusTooManyRequests, CodeTooManyReservations)

	ctx, cancel := context.WithCancel(context.Background())
	if resp, _ := openReserved(t, ctx, hs.URL, "Bearer a", first); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %d", resp.StatusCode)
	}
	cancel() // the client leaves: the reservation ends with its stream
	waitFor(t, "the closed stream's reservation to go", func() bool { return res.Len() == 2 })
	reserve(t, hs.URL, "Bearer a")
}

// Without ClientKey a client is its peer address, whatever Authorization it sends: the transport
// cannot tell a valid token from a made-up one, and a bound per header value would let one
// client take every reservation of the server by varying it.
func TestSSESingle_DefaultBoundIsPerPeerAddress(t *testing.T) {
	_, hs := singleServer(t, &Reservations{MaxPerClient: 2})
	reserve(t, hs.URL, "Bearer made-up-1")
	reserve(t, hs.URL, "")
	resp, body := do(t, http.MethodPut, hs.URL, "Bearer made-up-2", "", "")
	expectCode(t, resp, body, http.StatusTooManyRequests, CodeTooManyReservations)
}

// At shutdown the stream cancels its running operations, sends `complete` for each, ends, and
// Shutdown returns; a client that leaves cancels its operations too.
func TestSSESingle_ShutdownAndDisconnect(t *testing.T) {
	res := &Reservations{}
	hooks, hs := singleServer(t, res)

	gone := reserve(t, hs.URL, "")
	ctx, cancel := context.WithCancel(context.Background())
	openReserved(t, ctx, hs.URL, "", gone)
	startOp(t, hs.URL, "", gone, "h", "subscription { held }")
	<-hooks.started
	cancel()
	<-hooks.cancelled
	waitFor(t, "the left stream's reservation to go", func() bool { return res.Len() == 0 })

	token := reserve(t, hs.URL, "")
	_, events := openReserved(t, context.Background(), hs.URL, "", token)
	startOp(t, hs.URL, "", token, "one", "subscription { held }")
	startOp(t, hs.URL, "", token, "two", "subscription { held }")
	<-hooks.started
	<-hooks.started
	shutdown := make(chan error, 1)
	go func() { shutdown <- hs.Config.Shutdown(context.Background()) }()
	completed := map[string]bool{}
	for range 2 {
		ev := nextSingle(t, events)
		if ev.name != "complete" {
			t.Fatalf("event = %+v, want complete", ev)
		}
		completed[ev.ID] = true
	}
	if !completed["one"] || !completed["two"] {
		t.Fatalf("completed = %v", completed)
	}
	<-hooks.cancelled
	<-hooks.cancelled
	if _, open := <-events; open {
		t.Fatal("the stream went on after the completes")
	}
	if err := <-shutdown; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if res.Len() != 0 {
		t.Fatalf("%d reservations left", res.Len())
	}
}
