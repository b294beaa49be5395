package transports

import (
	"net"
	"net/http/httptest"
	"strings"
	"testing"
)

// wrappedConn is a listener's connection wrapper with no part in a hijacked connection's
// traffic, as access.CodeNetHTTPErrors's.
type wrappedConn struct{ net.Conn }

func (c wrappedConn) UnwrapHijacked() net.Conn { return c.Conn }

type wrappingListener struct{ net.Listener }

func (l wrappingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrappedConn{c}, nil
}

// A websocket reads and writes the socket itself, not through such a wrapper: its frame in
// every parked reader cost 2.3 KiB per connection (hijackUnwrapper).
func TestWebsocketRunsOnTheConnectionUnderAWrapper(t *testing.T) {
	conns := make(chan *conn, 1)
	observeConn = func(c *conn) { conns <- c }
	t.Cleanup(func() { observeConn = nil })
	srv := streamHandler(streamSchema(newStreamHooks()))
	srv.AddTransport(Websocket{})
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = wrappingListener{hs.Listener}
	hs.Start()
	t.Cleanup(hs.Close)
	c := dial(t, "ws"+strings.TrimPrefix(hs.URL, "http"), SubprotocolTransportWS)
	c.initialise()
	server := nextConn(t, conns)
	if _, ok := server.out.Conn.(*net.TCPConn); !ok {
		t.Fatalf("the websocket writes through %T, want the *net.TCPConn under the wrapper", server.out.Conn)
	}
}
