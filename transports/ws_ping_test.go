package transports

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// smallSendBuffers gives every accepted connection a 16 KiB send buffer, so a batch for a client
// that reads slowly stays in write for as long as the client takes to read it.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// A client's ping frame is answered without cutting the batch being written. gorilla's own
// answer sets a one-second write deadline on the socket, and that deadline cut the write in
// progress to a client that reads slowly but steadily (well within WriteTimeout and
// SlowClientTimeout): the connection dropped without a close frame (1006).
func TestAClientPingDoesNotCutTheWriteInProgress(t *testing.T) {
	t.Parallel() // its waits are the peer's pace: let them overlap the others'
	c := dialSlowReader(t, Websocket{WriteTimeout: 20 * time.Second, SlowClientTimeout: 20 * time.Second})
	ws := c.conn
	const n = 14 // 100 kB each, read at about 400 kB/s: the batch is in write for seconds
	c.subscribe("s", "subscription { ticks(n: 14, size: 100000) }")
	start, pinged := time.Now(), false
	for got := 0; got < n; got++ {
		_ = ws.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, _, err := ws.ReadMessage(); err != nil {
			t.Fatalf("after %d of %d results (%v; pinged: %v): %v", got, n, time.Since(start).Round(time.Millisecond), pinged, err)
		}
		time.Sleep(250 * time.Millisecond)
		if !pinged && time.Since(start) > 1500*time.Millisecond {
			pinged = true
			if err := ws.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !pinged {
		t.Fatal("the results came before the ping; the test proves nothing")
	}
	c.expect("complete", "s")
}

// A pong that waits for a long batch must not cost the connection its later control frames. Sent
// through gorilla with a deadline counted from the ping, such a pong was written with a deadline
// already past; gorilla then kept that timeout as its write error and refused every later
// control frame, so this 4400 never reached the client (1006).
func TestALatePongDoesNotSwallowTheCloseFrame(t *testing.T) {
	t.Parallel() // its waits are the peer's pace: let them overlap the others'
	c := dialSlowReader(t, Websocket{WriteTimeout: 3 * time.Second, SlowClientTimeout: 30 * time.Second})
	ws := c.conn
	time.Sleep(1200 * time.Millisecond) // the next batch renews its deadline: 3.75 s from its start
	c.subscribe("s", "subscription { ticks(n: 3, size: 400000) }")
	start := time.Now()
	time.Sleep(200 * time.Millisecond) // the first 400 kB batch is stuck in write
	if err := ws.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3400*time.Millisecond - time.Since(start)) // past a pong's 3 s, before the batch's 3.75 s
	for range 3 {
		c.expect("next", "s")
	}
	c.expect("complete", "s")
	c.sendRaw(`{"type":1}`)
	c.expectClose(CloseBadRequest, "")
}

// A client that stopped reading but still sends pings is let go within closeGrace at shutdown.
// Answered on the reader goroutine, its pong waited there for the stuck batch, and the reader
// never saw the deadline that closes the connection: it was served until the batch timed out.
func TestAStuckClientThatPingsIsLetGoAfterCloseGrace(t *testing.T) {
	t.Parallel() // its waits are the peer's pace: let them overlap the others'
	srv := streamHandler(streamSchema(newStreamHooks()))
	srv.AddTransport(Websocket{SlowClientTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c := dial(t, "ws"+strings.TrimPrefix(hs.URL, "http"), SubprotocolTransportWS)
	c.initialise()
	c.subscribe("flood", "subscription { ticks(n: 1000000, size: 32000) }")
	time.Sleep(1500 * time.Millisecond) // the socket buffers are full: the writer's batch is stuck
	if err := c.conn.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	go func() { _ = hs.Config.Shutdown(context.Background()) }()
	time.Sleep(50 * time.Millisecond)
	requireConnsGoneWithinCloseGrace(t, hs.Config, start)
}

// dialSlowReader serves ws on a server whose connections have 16 KiB send buffers and dials it
// with a 16 KiB receive buffer, initialised: a client on a slow link, for as long as it reads
// slowly, keeps the server's batch in write.
func dialSlowReader(t *testing.T, ws Websocket) *client {
	t.Helper()
	srv := streamHandler(streamSchema(newStreamHooks()))
	srv.AddTransport(ws)
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = smallSendBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(hs.Close)
	d := websocket.Dialer{Subprotocols: []string{SubprotocolTransportWS}, HandshakeTimeout: 5 * time.Second,
		NetDialContext: (&net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) })
		}}).DialContext}
	conn, resp, err := d.DialContext(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	c := &client{t: t, conn: conn}
	c.initialise()
	return c
}

// requireConnsGoneWithinCloseGrace waits until srv serves no websocket, failing if any is still
// served closeGrace (and some slack) after start, when its shutdown began.
func requireConnsGoneWithinCloseGrace(t *testing.T, srv *http.Server, start time.Time) {
	t.Helper()
	v, _ := serverConns.Load(srv)
	live := v.(*liveConns)
	deadline := start.Add(closeGrace + 2*time.Second)
	for {
		live.mu.Lock()
		left := len(live.conns)
		live.mu.Unlock()
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connection(s) still served %v after Shutdown began (closeGrace %v)",
				left, time.Since(start).Round(time.Millisecond), closeGrace)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
