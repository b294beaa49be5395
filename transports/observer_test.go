package transports

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// recordingObserver collects what an Observer is told; closed is signalled once per Closed call.
type recordingObserver struct {
	mu      sync.Mutex
	opened  []string
	codes   []int
	queued  int
	peak    int
	dropped int
	closed  chan struct{}
}

func newRecordingObserver() (*recordingObserver, *Observer) {
	r := &recordingObserver{closed: make(chan struct{}, 4)}
	return r, &Observer{
		Opened: func(_ *http.Request, protocol string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.opened = append(r.opened, protocol)
		},
		Closed: func(_ *http.Request, _ string, code int, lifetime time.Duration) {
			r.mu.Lock()
			r.codes = append(r.codes, code)
			r.mu.Unlock()
			r.closed <- struct{}{}
		},
		QueueBytes: func(delta int) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.queued += delta
			r.peak = max(r.peak, r.queued)
		},
		Dropped: func(string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.dropped++
		},
	}
}

func (r *recordingObserver) waitClosed(t *testing.T) {
	t.Helper()
	select {
	case <-r.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Observer.Closed was never called")
	}
}

func TestObserverSeesWebsocketLifecycle(t *testing.T) {
	rec, obs := newRecordingObserver()
	ts, url := newTestServer(t, Websocket{Observer: obs})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.subscribe("s1", "subscription { name }")
	ts.SendNextSubscriptionMessage()
	c.expect("next", "s1")
	if err := c.conn.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(4499, "client done"), time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	rec.waitClosed(t)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.opened) != 1 || rec.opened[0] != SubprotocolTransportWS {
		t.Fatalf("opened = %v", rec.opened)
	}
	if len(rec.codes) != 1 || rec.codes[0] != 4499 {
		t.Fatalf("close codes = %v, want the client's 4499", rec.codes)
	}
	if rec.peak == 0 || rec.queued != 0 {
		t.Fatalf("queue bytes: peak %d, left %d; want some queued and none left", rec.peak, rec.queued)
	}
}

func TestObserverSeesServerCloseCode(t *testing.T) {
	rec, obs := newRecordingObserver()
	_, url := newTestServer(t, Websocket{Observer: obs})
	c := dial(t, url, SubprotocolTransportWS)
	c.initialise()
	c.send(map[string]any{"type": "connection_init"}) // a second init is a protocol violation
	c.expectClose(CloseTooManyInits, "")
	rec.waitClosed(t)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.codes) != 1 || rec.codes[0] != CloseTooManyInits {
		t.Fatalf("close codes = %v, want %d", rec.codes, CloseTooManyInits)
	}
}
