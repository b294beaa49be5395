package transports

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/streamside"
)

// liveFeed is a source like the engine's live workspace stream: every subscriber has a queue of
// its own that publish fills without blocking, and tells the transport through
// its streamside.Stream's readiness when it has something, so the operation parks between events.
type liveFeed struct {
	mu   sync.Mutex
	subs map[*feedSubscriber]struct{}
}

type feedSubscriber struct {
	c    chan json.RawMessage
	mu   sync.Mutex
	wake func()
}

// feedQueue is a subscriber's queue: larger than any test publishes, so no subscriber is ended
// for lagging and the tests see the transport alone.
const feedQueue = 4096

func (f *liveFeed) subscribe(ctx context.Context) graphql.ResponseHandler {
	s := &feedSubscriber{c: make(chan json.RawMessage, feedQueue)}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		delete(f.subs, s)
		f.mu.Unlock()
	})
	streamside.Of(ctx).SetReady(s.ready)
	return func(context.Context) *graphql.Response {
		select {
		case data := <-s.c:
			return &graphql.Response{Data: data}
		case <-ctx.Done():
			return nil
		}
	}
}

func (s *feedSubscriber) ready(wake func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.c) > 0 {
		return true
	}
	s.wake = wake
	return false
}

// publish hands one event to every subscriber and reports how many there are.
func (f *liveFeed) publish(payload string) int {
	data, _ := json.Marshal(map[string]string{"feed": payload})
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		select {
		case s.c <- data:
		default:
			panic("a feed subscriber's queue overflowed")
		}
		s.mu.Lock()
		wake := s.wake
		s.wake = nil
		s.mu.Unlock()
		if wake != nil {
			wake()
		}
	}
	return len(f.subs)
}

func (f *liveFeed) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// newFeedServer serves `subscription { feed }` from a liveFeed over ws, and hands the test each
// connection the server makes.
func newFeedServer(t *testing.T, ws Websocket) (*liveFeed, string, <-chan *conn) {
	t.Helper()
	conns := make(chan *conn, 10)
	observeConn = func(c *conn) { conns <- c }
	t.Cleanup(func() { observeConn = nil })
	feed := &liveFeed{subs: map[*feedSubscriber]struct{}{}}
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		type Query { hello: String! }
		type Subscription { feed: String! }`})
	srv := streamHandler(&graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 1, true },
		ExecFunc:       func(ctx context.Context) graphql.ResponseHandler { return feed.subscribe(ctx) },
	})
	srv.AddTransport(ws)
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = smallSendBuffers{hs.Listener} // (ws_ping_test.go) filled by a few messages
	hs.Start()
	t.Cleanup(hs.Close)
	return feed, "ws" + strings.TrimPrefix(hs.URL, "http"), conns
}

// dialNonReader opens a connection whose socket takes only a few KiB, for a client that will
// stop reading: with the megabytes loopback sockets grow to, it would take a long flood to fill
// its server's queue; a remote client on a slow link fills it with a few messages.
func dialNonReader(t *testing.T, url string) *client {
	t.Helper()
	nd := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); err != nil {
			return err
		}
		return serr
	}}
	d := websocket.Dialer{Subprotocols: []string{SubprotocolTransportWS}, NetDialContext: nd.DialContext,
		ReadBufferSize: 1024, HandshakeTimeout: 5 * time.Second}
	conn, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	resp.Body.Close()
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn}
}

// nextConn is the next connection the server made.
func nextConn(t *testing.T, conns <-chan *conn) *conn {
	t.Helper()
	select {
	case c := <-conns:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the server made no connection")
		return nil
	}
}

// startFeeds opens a client that will stop reading with n feed subscriptions and a healthy one
// with one, and returns once every subscription has delivered an event.
func startFeeds(t *testing.T, feed *liveFeed, url string, conns <-chan *conn, n int) (slow, healthy *client, slowConn *conn) {
	t.Helper()
	slow = dialNonReader(t, url)
	slowConn = nextConn(t, conns)
	slow.initialise()
	for i := range n {
		slow.subscribe(fmt.Sprint("slow-", i), "subscription { feed }")
	}
	healthy = dial(t, url, SubprotocolTransportWS)
	nextConn(t, conns)
	healthy.initialise()
	healthy.subscribe("healthy", "subscription { feed }")
	await.State(t, 5*time.Second, "every subscription to start", func() (bool, string) {
		got := feed.subscribers()
		return got >= n+1, fmt.Sprintf("%d of %d started", got, n+1)
	})
	feed.publish("live")
	healthy.expect("next", "healthy")
	for range n {
		if m := slow.read(); m.Type != "next" {
			t.Fatalf("a slow subscription got %s: %s", m.Type, m.Payload)
		}
	}
	return slow, healthy, slowConn
}

// A client that stops reading with 20 live subscriptions holds no goroutine once its queue is
// full: its operations park with their results, and a healthy subscriber of the same source gets
// every event without waiting on it. Issue 21: each of them waited for room on one of the few
// shared runners, until SlowClientTimeout.
func TestWebsocket_ClientThatDoesNotReadHoldsNoGoroutine(t *testing.T) {
	feed, url, conns := newFeedServer(t, Websocket{SendQueue: 16, SlowClientTimeout: time.Minute, WriteTimeout: time.Minute})
	before := steadyGoroutines()
	const slowSubscriptions, events = 20, 300
	slow, healthy, slowConn := startFeeds(t, feed, url, conns, slowSubscriptions)
	live := steadyGoroutines()

	payload := strings.Repeat("x", 1000)
	for i := range events {
		feed.publish(fmt.Sprint(i, " ", payload))
		if m := healthy.read(); m.Type != "next" || !strings.Contains(string(m.Payload), fmt.Sprintf(`"%d x`, i)) {
			t.Fatalf("event %d: the healthy subscriber got %s %.40s", i, m.Type, m.Payload)
		}
	}
	// Its writer may be stuck in a write (one goroutine); nothing else waits for it.
	settleGoroutines(t, live+1)
	slowConn.mu.Lock()
	full, parked := !slowConn.hasRoomLocked(1000), len(slowConn.roomWaiters)
	slowConn.mu.Unlock()
	if !full || parked != slowSubscriptions {
		t.Fatalf("queue full: %v, operations parked for room: %d of %d", full, parked, slowSubscriptions)
	}

	// Once it is gone, everything it held ends: its parked operations are woken and finish.
	slow.conn.Close()
	healthy.conn.Close()
	settleGoroutines(t, before)
	settleSubscribers(t, feed, 0)
}

// A client whose operations all wait parked, with no producer waiting in place, is still closed
// with 1013 after SlowClientTimeout without write progress.
func TestWebsocket_ParkedClientIsClosedAsTooSlow(t *testing.T) {
	feed, url, conns := newFeedServer(t, Websocket{SendQueue: 16, SlowClientTimeout: 200 * time.Millisecond,
		WriteTimeout: 10 * time.Second})
	slow, _, slowConn := startFeeds(t, feed, url, conns, 20)
	payload := strings.Repeat("x", 1000)
	for i := range 50 { // 1 MB for the client that does not read; 50 KB for the healthy one, which reads
		feed.publish(fmt.Sprint(i, " ", payload))
	}
	for deadline := time.Now().Add(5 * time.Second); !slowConn.isClosing(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			slowConn.mu.Lock()
			defer slowConn.mu.Unlock()
			t.Fatalf("a client that does not read was not closed: queue %d (%d bytes), writing %v, parked %d, check %v, progress %v ago",
				len(slowConn.queue), slowConn.queuedBytes, slowConn.writing, len(slowConn.roomWaiters), slowConn.slowCheck != nil, time.Since(slowConn.progressAt))
		}
	}
	// What the socket already held comes first, then the close frame.
	_ = slow.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var err error
	for err == nil {
		_, _, err = slow.conn.ReadMessage()
	}
	var ce *websocket.CloseError
	if !asCloseError(err, &ce) || ce.Code != CloseTryAgainLater {
		t.Fatalf("want close %d, got %v", CloseTryAgainLater, err)
	}
	settleSubscribers(t, feed, 1) // the healthy subscription alone is left
}

// steadyGoroutines is the goroutine count once it has stopped falling (runners and writers end
// when they have nothing left to do).
func steadyGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(10 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

// settleSubscribers waits until feed has n subscribers.
func settleSubscribers(t *testing.T, feed *liveFeed, n int) {
	t.Helper()
	await.State(t, 5*time.Second, fmt.Sprintf("%d subscriptions to follow the feed", n), func() (bool, string) {
		got := feed.subscribers()
		return got == n, fmt.Sprintf("%d follow it", got)
	})
}
