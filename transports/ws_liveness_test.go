package transports

import (
	"context"
	"net/http/httptest"

	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

func TestWebsocket_RefusesUnsupportedSubprotocolBeforeUpgrade(t *testing.T) {
	_, url := newTestServer(t, Websocket{})
	for _, offered := range [][]string{nil, {"graphql-sse"}} {
		d := websocket.Dialer{Subprotocols: offered}
		_, resp, err := d.Dial(url, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("offered %v: err=%v resp=%v, want HTTP 400", offered, err, resp)
		}
		body := make([]byte, 512)
		n, _ := resp.Body.Read(body)
		resp.Body.Close()
		if !strings.Contains(string(body[:n]), "graphql-transport-ws, graphql-ws") || !strings.Contains(string(body[:n]), `"code":"BAD_REQUEST"`) {
			t.Fatalf("body %q does not name the supported subprotocols", body[:n])
		}
	}
	if c := dial(t, url, "graphql-ws", "graphql-transport-ws"); c.conn.Subprotocol() != SubprotocolTransportWS {
		t.Fatalf("preferred %q, want graphql-transport-ws", c.conn.Subprotocol())
	}
	if c := dial(t, url, "graphql-ws"); c.conn.Subprotocol() != SubprotocolLegacyWS {
		t.Fatalf("negotiated %q, want graphql-ws", c.conn.Subprotocol())
	}
}

// pingTestInterval is the PingInterval of the tests that keep a live peer through pings.
var pingTestInterval = map[bool]time.Duration{false: 400 * time.Millisecond, true: 800 * time.Millisecond}[raceEnabled]

func TestWebsocket_ServerPingsAndLivePeerStays(t *testing.T) {
	t.Parallel() // its waits are timers: let them overlap the others'
	// A peer is closed if it has not answered within two intervals: 800 ms here (1.6 s under the
	// race detector). At 100 ms, and at 250 ms under -race beside the other parallel tests, a
	// loaded machine once kept the reading goroutine below from answering in time.
	_, url := newTestServer(t, Websocket{PingInterval: pingTestInterval})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	pings := make(chan struct{}, 100)
	c.conn.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return c.conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	go func() { // keep reading so ping frames are handled
		for {
			if _, _, err := c.conn.NextReader(); err != nil {
				return
			}
		}
	}()
	for i := 0; i < 4; i++ { // four pings answered is two dead-peer deadlines survived
		select {
		case <-pings:
		case <-time.After(5 * time.Second):
			t.Fatalf("ping %d never came", i+1)
		}
	}
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"ping"}`)); err != nil {
		t.Fatalf("live peer was disconnected: %v", err)
	}
}

func TestWebsocket_DeadPeerIsClosed(t *testing.T) {
	hooks, url := newStreamServer(t, Websocket{PingInterval: 20 * time.Millisecond})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("h", "subscription { held }")
	var pinged atomic.Int32
	c.conn.SetPingHandler(func(string) error { pinged.Add(1); return nil }) // never answers
	c.expectClose(websocket.CloseGoingAway, "")
	if pinged.Load() == 0 {
		t.Fatal("server closed before pinging")
	}
	select {
	case <-hooks.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the dead peer's operation was not cancelled")
	}
}

// TestWebsocket_NothingLeaksAfterClose: a connection closed by the client's close frame, by a
// dropped TCP connection or by a protocol error ends its streams, its pinger and every goroutine
// it started. The pinger runs (a ping interval shorter than the test), but with a dead-peer
// deadline (twice the interval) a loaded machine's client always meets: at 10 ms the server
// sometimes judged the live client dead before the test closed it, and ended two of its three
// streams early ("1 streams running, want 3").
func TestWebsocket_NothingLeaksAfterClose(t *testing.T) {
	hooks, url := newStreamServer(t, Websocket{PingInterval: 250 * time.Millisecond})
	before := runtime.NumGoroutine()
	for round, closeBy := range []string{"client close frame", "dropped TCP", "protocol error"} {
		c := dial(t, url, SubprotocolTransportWS)
		c.initialise()
		for i := 0; i < 3; i++ {
			c.subscribe(fmt.Sprint(i), "subscription { held }")
		}
		for i := 0; i < 3; i++ {
			<-hooks.started
		}
		if hooks.Running() != 3 {
			t.Fatalf("%s: %d streams running, want 3", closeBy, hooks.Running())
		}
		switch round {
		case 0:
			_ = c.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "bye"))
			c.expectClose(1000, "")
		case 1:
			_ = c.conn.NetConn().Close()
		case 2:
			c.sendRaw("not json")
			c.expectClose(CloseBadRequest, "")
		}
		for i := 0; i < 3; i++ {
			<-hooks.cancelled
		}
		c.conn.Close()
		settleGoroutines(t, before)
	}
}

func TestWebsocket_SlowClientIsClosedAndOthersKeepFlowing(t *testing.T) {
	t.Parallel() // its waits are timers: let them overlap the others'
	hooks, url := newStreamServer(t, Websocket{SendQueue: 8, SlowClientTimeout: 300 * time.Millisecond, WriteTimeout: time.Second})
	slow := dial(t, url, SubprotocolTransportWS)
	slow.initialise()
	slow.subscribe("flood", "subscription { ticks(n: 2000, size: 32768) }")
	// The slow client reads nothing: once its socket buffers are full the writer is stuck, and
	// after SlowClientTimeout the connection is closed, which ends the producer. Meanwhile
	// another client is served.
	fast := dial(t, url, SubprotocolTransportWS)
	fast.initialise()
	fast.subscribe("t", "subscription { ticks(n: 5, size: 10) }")
	for i := 1; i <= 5; i++ {
		if m := fast.expect("next", "t"); string(m.Payload) != fmt.Sprintf(`{"data":{"ticks":"%d xxxxxxxxxx"}}`, i) {
			t.Fatalf("tick %d = %s", i, m.Payload)
		}
	}
	fast.expect("complete", "t")
	// Two streams end: the fast client's, and the slow client's once its connection closes.
	for range 2 {
		select {
		case n := <-hooks.produced:
			if n == 2000 {
				t.Log("the flood finished before the client was found slow")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a slow client held its producer beyond SlowClientTimeout")
		}
	}
	fast.subscribe("t2", "subscription { ticks(n: 1, size: 10) }")
	fast.expect("next", "t2")
	fast.expect("complete", "t2")

	_ = slow.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := slow.conn.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		// 1006: the stuck write timed out and the connection was dropped.
		if asCloseError(err, &ce) && ce.Code != CloseTryAgainLater && ce.Code != websocket.CloseAbnormalClosure {
			t.Fatalf("slow client closed with %d %q, want 1013 or a dropped connection", ce.Code, ce.Text)
		}
		if strings.Contains(err.Error(), "timeout") {
			t.Fatalf("slow client was never disconnected: %v", err)
		}
		return
	}
}

func TestWebsocket_ServerShutdownClosesWithGoingAway(t *testing.T) {
	t.Parallel() // its waits are timers: let them overlap the others'
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(Websocket{})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c := dial(t, "ws"+strings.TrimPrefix(hs.URL, "http"), SubprotocolTransportWS)
	c.initialise()
	c.subscribe("h", "subscription { held }")
	<-hooks.started
	go func() { _ = hs.Config.Shutdown(context.Background()) }()
	c.expectClose(websocket.CloseGoingAway, "Server shutting down")
	<-hooks.cancelled
}
