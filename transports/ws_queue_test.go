package transports

import (
	"fmt"
	"strings"
	"testing"
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
