package transports

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Issue 10: a subscriber that never reads held up to 124 MB, 20 subscriptions of 100 KB events,
// because the send queue counted messages only. With SendQueueBytes the bytes held for it never
// exceed the bound (a message larger than the bound aside, which this test does not send), and it
// is closed with 1013 and told to resume.
func TestWebsocket_SendQueueIsBoundedInBytes(t *testing.T) {
	const limit = 512 << 10
	var mu sync.Mutex
	var conns []*conn
	observeConn = func(c *conn) { mu.Lock(); conns = append(conns, c); mu.Unlock() }
	t.Cleanup(func() { observeConn = nil })
	hooks, url := newStreamServer(t, Websocket{SendQueue: 100_000, SendQueueBytes: limit,
		SlowClientTimeout: 300 * time.Millisecond, WriteTimeout: time.Second})
	slow := dial(t, url, SubprotocolTransportWS)
	slow.initialise()
	const subscriptions, size = 20, 100_000
	for i := range subscriptions {
		slow.subscribe(string(rune('a'+i)), "subscription { ticks(n: 1000, size: 100000) }")
	}
	for range subscriptions {
		select {
		case <-hooks.produced:
		case <-time.After(20 * time.Second):
			t.Fatal("a client that never reads held its producers")
		}
	}
	mu.Lock()
	c := conns[len(conns)-1]
	mu.Unlock()
	c.mu.Lock()
	peak := c.peakBytes
	c.mu.Unlock()
	// Exactly the bound: each message is smaller than it, so none may go past it (issue 21: a
	// bound that ignored the size of the message being queued overshot by one message, which
	// this test used to allow).
	if peak > limit {
		t.Fatalf("held %d bytes for a client that never read; the bound is %d", peak, limit)
	}
	_ = slow.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := slow.conn.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if asCloseError(err, &ce) && ce.Code != CloseTryAgainLater && ce.Code != websocket.CloseAbnormalClosure {
			t.Fatalf("closed with %d %q, want 1013 or a dropped connection", ce.Code, ce.Text)
		}
		if ce != nil && ce.Code == CloseTryAgainLater && !strings.Contains(ce.Text, "resume") {
			t.Fatalf("the close reason %q does not tell the client to resume", ce.Text)
		}
		if strings.Contains(err.Error(), "timeout") {
			t.Fatalf("never disconnected: %v", err)
		}
		return
	}
}

// A single message larger than SendQueueBytes is still delivered to a client that reads.
func TestWebsocket_OversizedMessageStillFlows(t *testing.T) {
	_, url := newStreamServer(t, Websocket{SendQueueBytes: 1024})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("big", "subscription { ticks(n: 3, size: 5000) }")
	for range 3 {
		c.expect("next", "big")
	}
	c.expect("complete", "big")
}
