package transports

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// A protocol violation closes the connection only after the messages already queued for it
// are written: the client must see its connection_ack (or pong) before the close code, however
// the reader and writer goroutines interleave. Repeated because the loss was a race.
func TestTransportWS_ProtocolCloseFlushesQueuedMessages(t *testing.T) {
	_, url := newStreamServer(t, Websocket{})
	subscribe := `{"id":"1","type":"subscribe","payload":{"query":"subscription { held }"}}`
	for range 50 {
		c := dial(t, url, SubprotocolTransportWS)
		c.sendRaw(`{"type":"connection_init"}`)
		c.sendRaw(subscribe)
		c.sendRaw(subscribe)
		c.expect("connection_ack", "")
		c.expectCloseNow(CloseDuplicateID, "Subscriber for 1 already exists")
		c.conn.Close()

		c = dial(t, url, SubprotocolTransportWS)
		c.sendRaw(`{"type":"ping"}`)
		c.sendRaw(subscribe)
		c.expect("pong", "")
		c.expectCloseNow(CloseUnauthorized, "Unauthorized")
		c.conn.Close()
	}
}

// A client that reads promptly is never closed for slowness, however big the burst: here 200
// pipelined operations, then MaxSubscriptions streams at once.
func TestWebsocket_BurstToAPromptReaderIsDelivered(t *testing.T) {
	_, url := newStreamServer(t, Websocket{})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	const pipelined = 200
	for i := range pipelined {
		c.subscribe(fmt.Sprint("q", i), "query { hello }")
	}
	// Each id ends with complete, or with error once MaxSubscriptions are running at once.
	finished := 0
	for finished < pipelined {
		switch m := c.read(); m.Type {
		case "complete":
			finished++
		case "error":
			if !strings.Contains(string(m.Payload), "TOO_MANY_SUBSCRIPTIONS") {
				t.Fatalf("error for %s: %s", m.ID, m.Payload)
			}
			finished++
		}
	}

	const streams, ticks = DefaultMaxSubscriptions, 50
	for i := range streams {
		c.subscribe(fmt.Sprint("s", i), fmt.Sprintf("subscription { ticks(n: %d, size: 64) }", ticks))
	}
	results := map[string]int{}
	for range streams * (ticks + 1) {
		m := c.read()
		results[m.Type]++
	}
	if results["next"] != streams*ticks || results["complete"] != streams {
		t.Fatalf("got %v, want %d next and %d complete", results, streams*ticks, streams)
	}
	c.expectQuiet()
}

// OperationLimiter refuses single operations with their own error and keeps the connection,
// on both subprotocols; it sees the context InitFunc returned.
func TestWebsocket_OperationLimiterRefusesAnOperationNotTheConnection(t *testing.T) {
	type clientKey struct{}
	var mu sync.Mutex
	allowed := map[string]int{}
	ws := Websocket{
		InitFunc: func(ctx context.Context, p map[string]any) (context.Context, *map[string]any, error) {
			return context.WithValue(ctx, clientKey{}, p["client"]), nil, nil
		},
		OperationLimiter: func(ctx context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			client := ctx.Value(clientKey{}).(string)
			if allowed[client] == 2 {
				return &gqlerror.Error{Message: "slow down", Extensions: map[string]any{"code": "RATE_LIMITED", "retryable": true}}
			}
			allowed[client]++
			return nil
		},
	}
	_, url := newStreamServer(t, ws)
	for _, protocol := range []string{SubprotocolTransportWS, SubprotocolLegacyWS} {
		c := dial(t, url, protocol)
		c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"client": protocol}})
		c.expect("connection_ack", "")
		if protocol == SubprotocolLegacyWS {
			c.expect("ka", "")
		}
		for _, id := range []string{"1", "2", "3"} {
			typ := "subscribe"
			if protocol == SubprotocolLegacyWS {
				typ = "start"
			}
			c.send(map[string]any{"id": id, "type": typ, "payload": map[string]any{"query": "query { hello }"}})
		}
		ended := map[string]string{}
		for len(ended) < 3 {
			switch m := c.read(); m.Type {
			case "complete":
				ended[m.ID] = "complete"
			case "error":
				if !strings.Contains(string(m.Payload), `"code":"RATE_LIMITED"`) || !strings.Contains(string(m.Payload), `"retryable":true`) {
					t.Fatalf("%s: error for %s: %s", protocol, m.ID, m.Payload)
				}
				ended[m.ID] = "error"
			}
		}
		if ended["1"] != "complete" || ended["2"] != "complete" || ended["3"] != "error" {
			t.Fatalf("%s: operations ended %v, want the third refused", protocol, ended)
		}
		if protocol == SubprotocolTransportWS {
			c.expectQuiet() // still open: the ping is answered
		} else {
			c.send(map[string]any{"id": "4", "type": "start", "payload": map[string]any{"query": "query { hello }"}})
			c.expect("error", "4") // still open, still limited
		}
	}
}
