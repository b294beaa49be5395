package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/gorilla/websocket"
)

func newTestServer(t *testing.T, ws Websocket) (*testserver.TestServer, string) {
	t.Helper()
	ts := testserver.New()
	ts.AddTransport(ws)
	hs := httptest.NewServer(ts)
	t.Cleanup(hs.Close)
	return ts, "ws" + strings.TrimPrefix(hs.URL, "http")
}

func TestTransportWS_InitAckAndSubscriptionStream(t *testing.T) {
	ws := Websocket{InitFunc: func(ctx context.Context, p map[string]any) (context.Context, *map[string]any, error) {
		ack := map[string]any{"welcome": p["token"]}
		return ctx, &ack, nil
	}}
	ts, url := newTestServer(t, ws)
	c := dial(t, url, SubprotocolTransportWS)
	if got := c.conn.Subprotocol(); got != SubprotocolTransportWS {
		t.Fatalf("subprotocol = %q", got)
	}
	c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"token": "abc"}})
	ack := c.expect("connection_ack", "")
	if string(ack.Payload) != `{"welcome":"abc"}` {
		t.Fatalf("ack payload = %s", ack.Payload)
	}
	c.subscribe("s1", "subscription { name }")
	ts.SendNextSubscriptionMessage()
	if m := c.expect("next", "s1"); string(m.Payload) != `{"data":{"name":"test"}}` {
		t.Fatalf("next payload = %s", m.Payload)
	}
	ts.SendNextSubscriptionMessage()
	c.expect("next", "s1")
	ts.SendCompleteSubscriptionMessage()
	c.expect("complete", "s1")
	c.expectQuiet()
}

func TestTransportWS_QueriesAndMutationsOverSocket(t *testing.T) {
	_, url := newTestServer(t, Websocket{})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("q", "query { name }")
	if m := c.expect("next", "q"); string(m.Payload) != `{"data":{"name":"test"}}` {
		t.Fatalf("query result = %s", m.Payload)
	}
	c.expect("complete", "q")
	c.subscribe("m", "mutation { name }")
	if m := c.expect("next", "m"); !strings.Contains(string(m.Payload), "mutations are not supported") {
		t.Fatalf("mutation result = %s", m.Payload)
	}
	c.expect("complete", "m")
}

func TestTransportWS_ValidationErrorIsErrorWithoutComplete(t *testing.T) {
	_, url := newTestServer(t, Websocket{})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("bad", "subscription { nope }")
	m := c.expect("error", "bad")
	var errs []map[string]any
	if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) == 0 {
		t.Fatalf("error payload must be a GraphQLError array, got %s", m.Payload)
	}
	c.expectQuiet() // no complete follows an error
	c.subscribe("bad", "query { name }")
	c.expect("next", "bad") // the id is free again
	c.expect("complete", "bad")
}

func TestTransportWS_SubscriptionErrorEndsWithoutComplete(t *testing.T) {
	_, url := newStreamServer(t, Websocket{})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("f", "subscription { failing }")
	c.expect("next", "f")
	m := c.expect("error", "f")
	if !strings.Contains(string(m.Payload), "RESUME_REQUIRED") {
		t.Fatalf("error payload = %s", m.Payload)
	}
	c.expectQuiet()
}

func TestTransportWS_CloseCodes(t *testing.T) {
	valid := `{"id":"1","type":"subscribe","payload":{"query":"subscription { name }"}}`
	cases := []struct {
		name     string
		init     bool
		messages []string
		code     int
		reason   string
	}{
		{"InvalidJSON", true, []string{`{"type":`}, CloseBadRequest, ""},
		{"NotAnObject", true, []string{`["connection_init"]`}, CloseBadRequest, ""},
		{"UnknownType", true, []string{`{"type":"hello"}`}, CloseBadRequest, "Unexpected message of type hello received"},
		{"ServerTypeFromClient", true, []string{`{"type":"next","id":"1","payload":{}}`}, CloseBadRequest, ""},
		{"MissingType", true, []string{`{"id":"1"}`}, CloseBadRequest, ""},
		// The protocol's own words, not encoding/json's (which name Go types).
		{"TypeNotString", true, []string{`{"type":5}`}, CloseBadRequest, `Invalid message received: message "type" is not a string`},
		{"NotJSON", true, []string{`{"type":`}, CloseBadRequest, "Invalid message received: message is not a JSON object"},
		{"SubscribeWithoutID", true, []string{`{"type":"subscribe","payload":{"query":"{name}"}}`}, CloseBadRequest, ""},
		{"SubscribeNumericID", true, []string{`{"id":1,"type":"subscribe","payload":{"query":"{name}"}}`}, CloseBadRequest, ""},
		{"SubscribeQueryNotString", true, []string{`{"id":"1","type":"subscribe","payload":{"query":5}}`}, CloseBadRequest, ""},
		{"SubscribeVariablesNotObject", true, []string{`{"id":"1","type":"subscribe","payload":{"query":"{name}","variables":[1]}}`}, CloseBadRequest, ""},
		{"CompleteWithoutID", true, []string{`{"type":"complete"}`}, CloseBadRequest, ""},
		{"InitPayloadNotObject", false, []string{`{"type":"connection_init","payload":"x"}`}, CloseBadRequest, ""},
		{"PingPayloadNotObject", true, []string{`{"type":"ping","payload":3}`}, CloseBadRequest, ""},
		{"SubscribeBeforeAck", false, []string{valid}, CloseUnauthorized, "Unauthorized"},
		{"SecondInit", true, []string{`{"type":"connection_init"}`}, CloseTooManyInits, "Too many initialisation requests"},
		{"DuplicateID", true, []string{valid, valid}, CloseDuplicateID, "Subscriber for 1 already exists"},
	}
	_, url := newTestServer(t, Websocket{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, url, SubprotocolTransportWS)
			if tc.init {
				c.initialise()
			}
			for _, m := range tc.messages {
				c.sendRaw(m)
			}
			c.expectClose(tc.code, tc.reason)
		})
	}
}

func TestTransportWS_InitTimeout(t *testing.T) {
	_, url := newTestServer(t, Websocket{InitTimeout: 50 * time.Millisecond})
	c := dial(t, url, SubprotocolTransportWS)
	c.send(map[string]any{"type": "ping"}) // pings are allowed before init but do not extend it
	c.expect("pong", "")
	c.expectClose(CloseInitTimeout, "Connection initialisation timeout")
}

func TestTransportWS_InitFuncRejectionIsForbidden(t *testing.T) {
	ws := Websocket{InitFunc: func(ctx context.Context, _ map[string]any) (context.Context, *map[string]any, error) {
		return ctx, nil, errors.New("bad token")
	}}
	_, url := newTestServer(t, ws)
	c := dial(t, url, SubprotocolTransportWS)
	c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"token": "x"}})
	c.expectClose(CloseForbidden, "Forbidden")
}

func TestTransportWS_InternalFailureIs4500(t *testing.T) {
	for _, field := range []string{"broken", "explode"} {
		t.Run(field, func(t *testing.T) {
			_, url := newStreamServer(t, Websocket{})
			c := dial(t, url, SubprotocolTransportWS)
			c.initialise()
			c.subscribe("x", "subscription { "+field+" }")
			c.expectClose(CloseInternalError, "Internal server error")
		})
	}
}

func TestTransportWS_CloseReasonFitsFrame(t *testing.T) {
	_, url := newTestServer(t, Websocket{})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	id := strings.Repeat("é", 100) // 200 bytes
	c.subscribe(id, "subscription { name }")
	c.subscribe(id, "subscription { name }")
	_ = c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := c.conn.ReadMessage()
	var ce *websocket.CloseError
	if !asCloseError(err, &ce) || ce.Code != CloseDuplicateID {
		t.Fatalf("want 4409, got %v", err)
	}
	if len(ce.Text) > 123 || !utf8.ValidString(ce.Text) || !strings.HasPrefix(ce.Text, "Subscriber for é") {
		t.Fatalf("reason (%d bytes) = %q", len(ce.Text), ce.Text)
	}
}

func TestTransportWS_ClientCompleteCancelsOperation(t *testing.T) {
	hooks, url := newStreamServer(t, Websocket{})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("h", "subscription { held }")
	c.expectQuiet() // the operation is running
	c.send(map[string]any{"id": "h", "type": "complete"})
	select {
	case <-hooks.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("operation context was not cancelled by complete")
	}
	c.expectQuiet() // the server does not answer complete with complete
	c.send(map[string]any{"id": "unknown", "type": "complete"})
	c.expectQuiet() // completing an unknown id is ignored
	c.subscribe("h", "subscription { held }")
	c.expectQuiet() // the id can be reused
}

func TestTransportWS_PingPongBothWays(t *testing.T) {
	_, url := newTestServer(t, Websocket{})
	c := dial(t, url, SubprotocolTransportWS)
	c.send(map[string]any{"type": "ping", "payload": map[string]any{"t": 1}})
	if m := c.expect("pong", ""); string(m.Payload) != `{"t":1}` {
		t.Fatalf("pong payload = %s", m.Payload)
	}
	c.initialise()
	c.sendRaw(`{"type":"ping"}`)
	if m := c.expect("pong", ""); len(m.Payload) != 0 {
		t.Fatalf("pong to a ping without payload carries %s", m.Payload)
	}
	c.send(map[string]any{"type": "pong", "payload": map[string]any{"unsolicited": true}})
	c.expectQuiet() // an unsolicited pong is accepted and not answered
}

func TestTransportWS_MaxSubscriptions(t *testing.T) {
	var mu sync.Mutex
	var refused []string
	observer := &Observer{Refused: func(protocol, code string) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, protocol+" "+code)
	}}
	_, url := newStreamServer(t, Websocket{MaxSubscriptions: 1, Observer: observer})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("a", "subscription { held }")
	c.subscribe("b", "subscription { held }")
	if m := c.expect("error", "b"); !strings.Contains(string(m.Payload), "TOO_MANY_SUBSCRIPTIONS") {
		t.Fatalf("error = %s", m.Payload)
	}
	c.expectQuiet()
	// No GraphQL execution saw that error, so the Observer is told (the metrics count it).
	mu.Lock()
	defer mu.Unlock()
	if want := []string{SubprotocolTransportWS + " TOO_MANY_SUBSCRIPTIONS"}; !slices.Equal(refused, want) {
		t.Errorf("the Observer was told of %v, want %v", refused, want)
	}
}

func TestTransportWS_MaxMessageBytes(t *testing.T) {
	_, url := newTestServer(t, Websocket{MaxMessageBytes: 256})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("big", "query { name } # "+strings.Repeat("x", 300))
	c.expectClose(1009, "")
}

func TestEncodeResult_FastPathMatchesJSON(t *testing.T) {
	// The executor sets an empty, non-nil extensions map on every response.
	resp := &graphql.Response{Data: json.RawMessage(`{"a":"x\"y","b":[1,2]}`), Extensions: map[string]any{}}
	fast, err := encodeResult("id \"1\" é", "next", resp)
	if !bytes.HasPrefix(fast, []byte(`{"id":`)) || bytes.Contains(fast, []byte("extensions")) {
		t.Fatalf("fast path not taken: %s", fast)
	}
	if err != nil {
		t.Fatal(err)
	}
	slow, _ := encodeMessage("id \"1\" é", "next", resp)
	var a, b any
	if json.Unmarshal(fast, &a) != nil || json.Unmarshal(slow, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("fast %s != %s", fast, slow)
	}
}
