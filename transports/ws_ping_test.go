package transports

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/forkgraph/forkgraph/internal/await"
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
	c, _ := dialSlowReader(t, Websocket{WriteTimeout: 20 * time.Second, SlowClientTimeout: 20 * time.Second})
	ws := c.conn
	// 100 kB each, read at about 500 kB/s: once the first is read, the rest are in write for
	// 1.4 s, past the second a deadline set by the ping would give them.
	const n, pace = 8, 200 * time.Millisecond
	c.subscribe("s", "subscription { ticks(n: 8, size: 100000) }")
	var pingedAt time.Time
	for got := 0; got < n; got++ {
		_ = ws.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, _, err := ws.ReadMessage(); err != nil {
			t.Fatalf("after %d of %d results (pinged %v before): %v", got, n, time.Since(pingedAt).Round(time.Millisecond), err)
		}
		if pingedAt.IsZero() {
			if err := ws.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			pingedAt = time.Now()
		}
		time.Sleep(pace) // the slow reader's pace is the point of the test
	}
	if since := time.Since(pingedAt); since < 1200*time.Millisecond {
		t.Fatalf("the results were read %v after the ping, within the second its deadline gives; the test proves nothing", since)
	}
	c.expect("complete", "s")
}

// lateWriteTimeout is TestALatePongDoesNotSwallowTheCloseFrame's WriteTimeout: a batch is cut
// 1.25 × it after it starts, a pong written with WriteTimeout from its ping at 1 × it after the
// ping, so a batch that starts just before the ping leaves a quarter of it (400 ms; 800 ms under
// the race detector) between the two.
var lateWriteTimeout = map[bool]time.Duration{false: 1600 * time.Millisecond, true: 3200 * time.Millisecond}[raceEnabled]

// lateReadMargin is what the late pong test leaves itself to read the batch before its deadline.
var lateReadMargin = lateWriteTimeout / 8

// A pong that waits for a long batch must not cost the connection its later control frames. Sent
// through gorilla with a deadline counted from the ping, such a pong was written with a deadline
// already past; gorilla then kept that timeout as its write error and refused every later
// control frame, so this 4400 never reached the client (1006).
func TestALatePongDoesNotSwallowTheCloseFrame(t *testing.T) {
	t.Parallel() // its waits are the peer's pace: let them overlap the others'
	// The client must start reading inside a window of a quarter of the WriteTimeout, less the
	// time from the batch's start to the ping; an attempt that pinged too late to leave the read
	// lateReadMargin, or woke too late for it (a loaded machine), would see the batch cut by its
	// own WriteTimeout, which proves nothing either way, so it is dropped and made again.
	for attempt := 1; ; attempt++ {
		if latePongAttempt(t) {
			return
		}
		if attempt == 3 {
			t.Fatal("three attempts woke too late to read the batch within its WriteTimeout; the machine is too loaded for this test")
		}
		t.Logf("attempt %d woke too late to read the batch within its WriteTimeout; again", attempt)
	}
}

// latePongAttempt runs TestALatePongDoesNotSwallowTheCloseFrame once and reports false, having
// read nothing, if the test goroutine was too late to read the batch before its deadline.
func latePongAttempt(t *testing.T) bool {
	timeout := lateWriteTimeout
	c, srv := dialSlowReader(t, Websocket{WriteTimeout: timeout, SlowClientTimeout: 30 * time.Second})
	defer c.conn.Close()
	// The connection_ack's write left a deadline 1.25 × timeout after it; once that has less than
	// timeout left, the next batch renews it to 1.25 × timeout from the batch's start.
	time.Sleep(timeout/4 + 100*time.Millisecond)
	// 150 kB each: more than the two sockets' buffers hold (16 KiB each, doubled by the kernel),
	// so the first batch is stuck, and little enough to be read within the window's second half.
	c.subscribe("s", "subscription { ticks(n: 3, size: 150000) }")
	batchStart := awaitBatchInWrite(t, srv)
	if err := c.conn.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	pongDeadline := time.Now().Add(timeout)          // the old pong's, counted from the ping
	batchDeadline := batchStart.Add(timeout * 5 / 4) // the batch's
	readAt := batchDeadline.Add(-lateReadMargin)     // past the first, as late before the second as the read allows
	if readAt.Sub(pongDeadline) < 50*time.Millisecond {
		return false // pinged too long after the batch started
	}
	time.Sleep(time.Until(readAt))
	if time.Until(batchDeadline) < lateReadMargin*3/4 {
		return false // woke too late
	}
	for range 3 {
		c.expect("next", "s")
	}
	c.expect("complete", "s")
	c.sendRaw(`{"type":1}`)
	c.expectClose(CloseBadRequest, "")
	return true
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
	awaitStuckWriters(t, hs.Config, 1) // the socket buffers are full: the writer's batch is stuck
	if err := c.conn.WriteControl(websocket.PingMessage, []byte("hi"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	// The reader hands the ping to the writer (pendingPong). Waited for without failing: the old
	// reader blocked in the pong's write instead, which the shutdown below must catch.
	sc := servedConns(hs.Config)[0] // awaitStuckWriters saw it
	_ = await.Poll(context.Background(), time.Second, func() (bool, error) {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		return sc.pendingPong != nil, nil
	})
	start := time.Now()
	go func() { _ = hs.Config.Shutdown(context.Background()) }()
	requireConnsGoneWithinCloseGrace(t, hs.Config, start)
}

// dialSlowReader serves ws on a server whose connections have 16 KiB send buffers and dials it
// with a 16 KiB receive buffer, initialised: a client on a slow link, for as long as it reads
// slowly, keeps the server's batch in write. It returns the client and the server.
func dialSlowReader(t *testing.T, ws Websocket) (*client, *http.Server) {
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
	return c, hs.Config
}

// servedConns are the websockets srv serves now.
func servedConns(srv *http.Server) []*conn {
	v, ok := serverConns.Load(srv)
	if !ok {
		return nil
	}
	live := v.(*liveConns)
	live.mu.Lock()
	defer live.mu.Unlock()
	conns := make([]*conn, 0, len(live.conns))
	for c := range live.conns {
		conns = append(conns, c)
	}
	return conns
}

// awaitBatchInWrite waits until the one websocket srv serves has a batch of messages in write
// and returns when that batch started (its write deadline counts from then).
func awaitBatchInWrite(t *testing.T, srv *http.Server) time.Time {
	t.Helper()
	var start time.Time
	await.State(t, 5*time.Second, "a batch in write", func() (bool, string) {
		conns := servedConns(srv)
		if len(conns) != 1 {
			return false, fmt.Sprintf("%d connections served", len(conns))
		}
		c := conns[0]
		c.mu.Lock()
		defer c.mu.Unlock()
		start = c.progressAt
		return c.writingBytes > 0, fmt.Sprintf("writing %d bytes, %d queued", c.writingBytes, c.queuedBytes)
	})
	return start
}

// stuckFor is how long a batch must have been in write before awaitStuckWriters calls it stuck:
// on loopback a batch is written in microseconds unless the peer's socket buffers are full.
const stuckFor = 100 * time.Millisecond

// awaitStuckWriters waits until n of the websockets srv serves have had one batch in write for
// stuckFor: their clients stopped reading, and their socket buffers are full.
func awaitStuckWriters(t *testing.T, srv *http.Server, n int) {
	t.Helper()
	await.State(t, 10*time.Second, fmt.Sprintf("%d connections' writes to be stuck", n), func() (bool, string) {
		stuck := 0
		for _, c := range servedConns(srv) {
			c.mu.Lock()
			if c.writingBytes > 0 && time.Since(c.progressAt) >= stuckFor {
				stuck++
			}
			c.mu.Unlock()
		}
		return stuck >= n, fmt.Sprintf("%d stuck", stuck)
	})
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
