package transports

import (
	"net/http"
	"sync"

	"github.com/gorilla/websocket"
)

// liveConns are the open websocket connections of one http.Server. Connections are served in
// their own goroutines after the handler returns (so net/http's per-request goroutine, stack
// and buffers are released), which puts them beyond the request context; this registry lets
// Server.Shutdown still close them, with 1001.
type liveConns struct {
	mu       sync.Mutex
	conns    map[*conn]struct{}
	shutdown bool
}

var serverConns sync.Map // *http.Server → *liveConns

// track registers c with the server that accepted r and returns the function that forgets it.
// It reports false when that server is already shutting down.
func track(r *http.Request, c *conn) (untrack func(), ok bool) {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	if srv == nil {
		return func() {}, true
	}
	fresh := &liveConns{conns: map[*conn]struct{}{}}
	v, loaded := serverConns.LoadOrStore(srv, fresh)
	live := v.(*liveConns)
	if !loaded {
		srv.RegisterOnShutdown(func() { live.closeAll() })
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.shutdown {
		return func() {}, false
	}
	live.conns[c] = struct{}{}
	return func() {
		live.mu.Lock()
		delete(live.conns, c)
		live.mu.Unlock()
	}, true
}

func (l *liveConns) closeAll() {
	l.mu.Lock()
	l.shutdown = true
	conns := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	// All at once: a close frame waits for the write in progress on its connection, up to
	// closeGrace for a client that stopped reading, and one after another each such client
	// delayed every later one's 1001, past the server's shutdown grace with a handful of them.
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { c.abort(websocket.CloseGoingAway, "Server shutting down") })
	}
	wg.Wait()
}
