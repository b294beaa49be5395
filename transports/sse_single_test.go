package transports

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// singleServer serves streamSchema over SSE with single-connection mode on.
func singleServer(t *testing.T, res *Reservations) (*streamHooks, *httptest.Server) {
	t.Helper()
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(SSE{Single: res})
	srv.AddTransport(HTTP{})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hooks, hs
}

func do(t *testing.T, method, target, auth, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if token != "" {
		req.Header.Set(TokenHeader, token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func reserve(t *testing.T, base, auth string) string {
	t.Helper()
	resp, body := do(t, http.MethodPut, base, auth, "", "")
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || body == "" {
		t.Fatalf("PUT = %d %q %q, want 201 with a text/plain token", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return body
}

// openReserved opens the stream of token (GET) and returns its status and events.
func openReserved(t *testing.T, ctx context.Context, base, auth, token string) (*http.Response, chan sseEvent) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"?"+url.Values{"token": {token}}.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan sseEvent, 16)
	if resp.StatusCode == http.StatusOK {
		go readEvents(t, resp, events)
	} else {
		close(events)
	}
	return resp, events
}

func startOp(t *testing.T, base, auth, token, id, query string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "extensions": map[string]any{"operationId": id}})
	if resp, text := do(t, http.MethodPost, base, auth, token, string(body)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s = %d %s, want 202", id, resp.StatusCode, text)
	}
}

// singleEvent is a decoded event of single-connection mode.
type singleEvent struct {
	name    string
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

func nextSingle(t *testing.T, events <-chan sseEvent) singleEvent {
	t.Helper()
	ev := nextEvent(t, events)
	out := singleEvent{name: ev.name}
	if err := json.Unmarshal([]byte(ev.data), &out); err != nil || out.ID == "" {
		t.Fatalf("event %+v: data is not {id, payload}: %v", ev, err)
	}
	return out
}

// expectCode checks a refused request's status and extensions.code.
func expectCode(t *testing.T, resp *http.Response, body string, status int, code string) {
	t.Helper()
	var res struct {
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	if resp.StatusCode != status || json.Unmarshal([]byte(body), &res) != nil || len(res.Errors) != 1 ||
		res.Errors[0].Extensions["code"] != code {
		t.Fatalf("answer = %d %s, want %d with code %s", resp.StatusCode, body, status, code)
	}
}

// Two operations share one stream; each event names its operation, each operation's events
// arrive in order and end with its own `complete`.
func TestSSESingle_TwoOperationsOnOneStream(t *testing.T) {
	_, hs := singleServer(t, &Reservations{})
	token := reserve(t, hs.URL, "")
	resp, events := openReserved(t, context.Background(), hs.URL, "", token)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	startOp(t, hs.URL, "", token, "ticks", "subscription { ticks(n: 3, size: 1) }")
	startOp(t, hs.URL, "", token, "hello", "{ hello }")
	got := map[string][]string{}
	for completes := 0; completes < 2; {
		ev := nextSingle(t, events)
		if ev.name == "complete" {
			if ev.Payload != nil {
				t.Fatalf("complete carries a payload: %s", ev.Payload)
			}
			completes++
		}
		got[ev.ID] = append(got[ev.ID], ev.name+" "+string(ev.Payload))
	}
	want := map[string][]string{
		"ticks": {`next {"data":{"ticks":"1 x"}}`, `next {"data":{"ticks":"2 x"}}`, `next {"data":{"ticks":"3 x"}}`, "complete "},
		"hello": {`next {"data":{"hello":"world"}}`, "complete "},
	}
	for id, evs := range want {
		if strings.Join(got[id], "|") != strings.Join(evs, "|") {
			t.Errorf("events of %s = %q, want %q", id, got[id], evs)
		}
	}
}

// An operation posted before its stream opens waits for it; one that does not validate is
// answered 400 with its errors on the POST, as GraphQL over HTTP does, and never streamed.
func TestSSESingle_OperationBeforeStreamAndValidationError(t *testing.T) {
	_, hs := singleServer(t, &Reservations{})
	token := reserve(t, hs.URL, "")
	startOp(t, hs.URL, "", token, "early", "{ hello }")
	resp, body := do(t, http.MethodPost, hs.URL, "", token, `{"query":"{ nope }","extensions":{"operationId":"bad"}}`)
	expectCode(t, resp, body, http.StatusBadRequest, "GRAPHQL_VALIDATION_FAILED")
	_, events := openReserved(t, context.Background(), hs.URL, "", token)
	if ev := nextSingle(t, events); ev.ID != "early" || ev.name != "next" || string(ev.Payload) != `{"data":{"hello":"world"}}` {
		t.Fatalf("event = %+v, want the early operation's result", ev)
	}
	if ev := nextSingle(t, events); ev.ID != "early" || ev.name != "complete" {
		t.Fatalf("event = %+v, want complete of early", ev)
	}
	startOp(t, hs.URL, "", token, "bad", "{ hello }") // the refused id was never taken
	if ev := nextSingle(t, events); ev.ID != "bad" || ev.name != "next" {
		t.Fatalf("event = %+v, want next of bad", ev)
	}
}

// DELETE cancels one operation: its resolver's context ends, nothing more (not even complete)
// is sent for it, the stream goes on and the id can be used again.
func TestSSESingle_DeleteStopsOneOperation(t *testing.T) {
	hooks, hs := singleServer(t, &Reservations{})
	token := reserve(t, hs.URL, "")
	_, events := openReserved(t, context.Background(), hs.URL, "", token)
	startOp(t, hs.URL, "", token, "held", "subscription { held }")
	<-hooks.started
	body := `{"query":"{ hello }","extensions":{"operationId":"held"}}`
	resp, text := do(t, http.MethodPost, hs.URL, "", token, body)
	expectCode(t, resp, text, http.StatusConflict, CodeConflict) // the id is in use
	if resp, _ := do(t, http.MethodDelete, hs.URL+"?operationId=held", "", token, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE = %d", resp.StatusCode)
	}
	<-hooks.cancelled
	startOp(t, hs.URL, "", token, "after", "{ hello }")
	for _, want := range []string{"next", "complete"} {
		if ev := nextSingle(t, events); ev.ID != "after" || ev.name != want {
			t.Fatalf("event = %+v, want %s of after", ev, want)
		}
	}
	startOp(t, hs.URL, "", token, "held", "{ hello }")
	if ev := nextSingle(t, events); ev.ID != "held" || ev.name != "next" {
		t.Fatalf("event = %+v, want next of the reused id", ev)
	}
}
