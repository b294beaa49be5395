package transports

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
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
	srv := handler.New(streamSchema(newStreamHooks()))
	srv.AddTransport(Websocket{WriteTimeout: 20 * time.Second, SlowClientTimeout: 20 * time.Second})
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = smallSendBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(hs.Close)

	d := websocket.Dialer{Subprotocols: []string{SubprotocolTransportWS}, HandshakeTimeout: 5 * time.Second,
		NetDialContext: (&net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10) })
		}}).DialContext}
	ws, resp, err := d.DialContext(context.Background(), "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Cleanup(func() { ws.Close() })
	c := &client{t: t, conn: ws}
	c.initialise()
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
