package transports

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// At shutdown every websocket hears 1001 at once. A close frame waits for the write in progress on
// its connection, up to closeGrace for a client that stopped reading; sent one connection after
// another, each such client delayed every later client's 1001 by about a second.
func TestShutdownClosesEveryWebsocketAtOnce(t *testing.T) {
	t.Parallel() // its wait is closeGrace: let it overlap the others'
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(Websocket{SlowClientTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	url := "ws" + strings.TrimPrefix(hs.URL, "http")

	const stuck, healthy = 6, 6
	for range stuck { // subscribed to a flood they never read: their writes block
		c := dial(t, url, SubprotocolTransportWS)
		c.initialise()
		c.subscribe("flood", "subscription { ticks(n: 1000000, size: 32000) }")
	}
	var live []*client
	for range healthy {
		c := dial(t, url, SubprotocolTransportWS)
		c.initialise()
		c.subscribe("h", "subscription { held }")
		<-hooks.started
		live = append(live, c)
	}
	awaitStuckWriters(t, hs.Config, stuck) // the flooded clients' socket buffers are full

	start := time.Now()
	go func() { _ = hs.Config.Shutdown(context.Background()) }()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for _, c := range live {
		wg.Go(func() {
			_ = c.conn.SetReadDeadline(time.Now().Add(15 * time.Second))
			_, _, err := c.conn.ReadMessage()
			var ce *websocket.CloseError
			if !asCloseError(err, &ce) || ce.Code != websocket.CloseGoingAway {
				t.Errorf("healthy client: %v, want close 1001", err)
			}
			mu.Lock()
			slowest = max(slowest, time.Since(start))
			mu.Unlock()
		})
	}
	wg.Wait()
	if slowest > 500*time.Millisecond {
		t.Fatalf("a reading client got its 1001 %v after Shutdown began: %d clients that do not read held it up",
			slowest.Round(time.Millisecond), stuck)
	}

	// The clients that do not read are let go after closeGrace, not after their writes' deadline
	// (WriteTimeout, 30 s here): the reader's deadline is set before the close frame, which waits
	// for the stuck write, and when it passes the connection is closed, ending that write.
	requireConnsGoneWithinCloseGrace(t, hs.Config, start)
}
