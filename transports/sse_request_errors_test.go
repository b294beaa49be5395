package transports

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// entries decodes a `next` payload into its top-level entries.
func entries(t *testing.T, data string) map[string]json.RawMessage {
	t.Helper()
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data), &out); err != nil {
		t.Fatalf("payload %q is not a JSON object: %v", data, err)
	}
	return out
}

// expectErrorsOnly checks that a payload has errors and no data entry: a request refused before
// execution has none (GraphQL spec §7.1.2), as the HTTP transport answers it.
func expectErrorsOnly(t *testing.T, what, data string) {
	t.Helper()
	got := entries(t, data)
	if _, ok := got["errors"]; !ok {
		t.Errorf("%s: payload %s has no errors", what, data)
	}
	if _, ok := got["data"]; ok {
		t.Errorf("%s: payload %s has a data entry", what, data)
	}
}

// In distinct-connections mode, a request refused before execution (validation, @defer in a
// subscription, an operation interceptor's refusal) and the errors that end a stream arrive as
// a `next` without a data entry; a result keeps its data exactly as before.
func TestSSE_RequestErrorsHaveNoDataEntry(t *testing.T) {
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if graphql.GetOperationContext(ctx).Operation.Name == "Refused" {
			return graphql.OneShot(graphql.ErrorResponse(ctx, "refused by an interceptor"))
		}
		return next(ctx)
	})
	srv.AddTransport(SSE{})
	hs := httptest.NewServer(srv)
	defer hs.Close()

	for name, body := range map[string]string{
		"validation error":      `{"query":"{ nope }"}`,
		"defer in subscription": `{"query":"subscription { ... @defer { held } }"}`,
		"interceptor refusal":   `{"query":"query Refused { hello }"}`,
	} {
		_, events := openStream(t, context.Background(), http.MethodPost, hs.URL, body)
		ev := nextEvent(t, events)
		if ev.name != "next" {
			t.Fatalf("%s: event = %+v, want next", name, ev)
		}
		expectErrorsOnly(t, name, ev.data)
		if ev := nextEvent(t, events); ev.name != "complete" {
			t.Fatalf("%s: event = %+v, want complete", name, ev)
		}
	}

	_, events := openStream(t, context.Background(), http.MethodPost, hs.URL, `{"query":"subscription { failing }"}`)
	if ev := nextEvent(t, events); ev.data != `{"data":{"failing":"first"}}` {
		t.Fatalf("first event = %+v, want the result unchanged", ev)
	}
	expectErrorsOnly(t, "stream ended with an error", nextEvent(t, events).data)
}

// In single-connection mode the errors that end a stream arrive without a data entry too; a
// result keeps its data. (Request errors are answered on the POST, without data, already.)
func TestSSESingle_StreamErrorsHaveNoDataEntry(t *testing.T) {
	_, hs := singleServer(t, &Reservations{})
	token := reserve(t, hs.URL, "")
	_, events := openReserved(t, context.Background(), hs.URL, "", token)
	startOp(t, hs.URL, "", token, "f", "subscription { failing }")
	if ev := nextSingle(t, events); string(ev.Payload) != `{"data":{"failing":"first"}}` {
		t.Fatalf("first event = %+v, want the result unchanged", ev)
	}
	ev := nextSingle(t, events)
	if ev.name != "next" {
		t.Fatalf("event = %+v, want next with the stream's errors", ev)
	}
	expectErrorsOnly(t, "stream ended with an error", string(ev.Payload))
	if ev := nextSingle(t, events); ev.name != "complete" {
		t.Fatalf("event = %+v, want complete", ev)
	}
}
