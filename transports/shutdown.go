package transports

import (
	"context"
	"fmt"
	"net/http"
	"sync"
)

// serverShutdowns maps each *http.Server to a channel closed when its Shutdown begins.
var serverShutdowns sync.Map

// shutdownSignal returns a channel closed when the http.Server that accepted r begins to shut
// down (nil, which never fires, outside an http.Server). Streams use it to end cleanly, with
// `complete`, while Shutdown waits for their handlers, instead of being cut by a cancelled
// request context.
func shutdownSignal(r *http.Request) <-chan struct{} {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	if srv == nil {
		return nil
	}
	fresh := make(chan struct{})
	v, loaded := serverShutdowns.LoadOrStore(srv, fresh)
	if !loaded {
		srv.RegisterOnShutdown(func() { close(fresh) })
	}
	return v.(chan struct{})
}

// Drain shuts srv down: it stops accepting, then waits, until ctx ends, for in-flight requests,
// which keep their contexts meanwhile (streams see the shutdown and end cleanly). When the grace
// period runs out, the requests still running are cancelled with cancelRequests and their
// connections closed, and the error says so.
func Drain(ctx context.Context, srv *http.Server, cancelRequests context.CancelFunc) error {
	err := srv.Shutdown(ctx)
	if err != nil {
		cancelRequests()
		_ = srv.Close()
		return fmt.Errorf("drain: %w (in-flight requests were cancelled)", err)
	}
	return nil
}
