package transports

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// bodyWriter stands for the http.ResponseWriter a request body can hold (http.MaxBytesReader
// does): through it, net/http's connection and its buffers.
type bodyWriter struct {
	http.ResponseWriter
	//lint:ignore U1000 never read: it is the weight the test looks for, held through the body
	pad [4096]byte
}

// An upgraded connection must not keep what only the HTTP exchange needed: its request body,
// which can hold the http.ResponseWriter and through it net/http's 10 KiB of buffers for the
// hijacked connection, for as long as the websocket lives.
func TestWebsocketReleasesTheUpgradeRequestBody(t *testing.T) {
	hooks := newStreamHooks()
	srv := streamHandler(streamSchema(hooks))
	srv.AddTransport(Websocket{Observer: &Observer{}})
	released := make(chan struct{}, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &bodyWriter{ResponseWriter: w}
		runtime.AddCleanup(bw, func(ch chan struct{}) { ch <- struct{}{} }, released)
		r.Body = http.MaxBytesReader(bw, r.Body, 1<<20)
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	c := dial(t, "ws"+strings.TrimPrefix(hs.URL, "http"), SubprotocolTransportWS)
	c.initialise()
	c.subscribe("1", "subscription { held }")
	<-hooks.started
	deadline := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-released:
			c.expectQuiet() // the connection is still live
			return
		case <-deadline:
			t.Fatal("the live websocket still holds its upgrade request's body (and the response writer behind it)")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
