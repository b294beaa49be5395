package transports

import (
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
