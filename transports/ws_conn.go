package transports

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// closeGrace is how long a closing connection waits for the peer's close frame before dropping
// the TCP connection; dropping it at once could reset the socket before the peer reads our code.
const closeGrace = time.Second

// wsProtocol is one websocket subprotocol: how incoming messages are handled and how the shared
// operation machinery names its outgoing messages.
type wsProtocol interface {
	handle(c *conn, data []byte)
	// resultType names the message carrying one execution result ("next" or "data").
	resultType() string
	// keepAlive is called on every ping tick once the connection is acknowledged.
	keepAlive(c *conn)
	// credentialEnded ends the connection whose credential expired or was revoked (Lifetime).
	credentialEnded(c *conn, err *gqlerror.Error)
}

// conn is one websocket connection. The HTTP handler's goroutine reads; a writer goroutine,
// started only while messages wait, writes; every operation runs in its own goroutine.
type conn struct {
	cfg      Websocket
	ws       *websocket.Conn
	out      *batchConn // the connection under ws; the writer batches its frames
	exec     graphql.GraphExecutor
	headers  http.Header
	protocol wsProtocol

	// For Observer: the request that opened the connection, its subprotocol, when it opened,
	// and the first close code sent or received.
	request     *http.Request
	subprotocol string
	openedAt    time.Time
	closeCode   atomic.Int32

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	// Touched only by the reading goroutine (operations start after opBase is set).
	initReceived bool
	initError    error           // why InitFunc refused, for the legacy connection_error
	opBase       context.Context // InitFunc's context; operations derive from it

	acked     atomic.Bool // set once connection_ack is queued; read by the ping timer too
	closeSent atomic.Bool // set before the close frame is written; no data frame may follow

	mu      sync.Mutex
	closing bool // no more output is accepted; queued output is written only for a pending close
	ops     map[string]*operation
	queue   [][]byte
	writing bool
	// queuedBytes counts the queue's bytes and writingBytes the batch being written; together
	// they are bounded by SendQueueBytes. peakBytes is their high-water mark.
	queuedBytes, writingBytes, peakBytes int
	// progressAt is when the writer last took the queue; progress, when not nil, is closed
	// then to wake producers waiting for room.
	progressAt time.Time
	progress   chan struct{}
	// roomWaiters are the live subscriptions parked until the queue has room for their result,
	// and slowCheck the timer that closes the connection if it never does (ws_room.go).
	roomWaiters []*streamRun
	slowCheck   *time.Timer
	pingTimer   *time.Timer
	// pendingClose is a protocol close that waits for the queued messages to be written.
	pendingClose *closeRequest
	// pendingPong is the payload of the pong that answers the client's latest ping (RFC 6455
	// lets a pong answer only the latest), written by the writer ahead of its next batch.
	pendingPong *string
	// releaseLifetime stops watching the credential's lifetime (watchLifetime); nil: none.
	releaseLifetime func()

	opsWG    sync.WaitGroup // running operations
	writerWG sync.WaitGroup // writer goroutine and asynchronous closes
}

func newConn(cfg Websocket, ws *websocket.Conn, out *batchConn, exec graphql.GraphExecutor, r *http.Request) *conn {
	// The request context is cancelled when the handler returns, which is at once: keep its
	// values only.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	return &conn{
		cfg: cfg, ws: ws, out: out, exec: exec, headers: r.Header, request: withoutBody(r), openedAt: time.Now(),
		ctx: ctx, cancel: cancel, opBase: ctx,
		ops: map[string]*operation{},
	}
}

// withoutBody is the upgrade request as the connection keeps it for the Observer: without its
// body, which can hold the http.ResponseWriter (http.MaxBytesReader does), and through it
// net/http's own connection with its 4 KiB read and write buffers and the response's 2 KiB one,
// all useless once the connection is hijacked: about 11 KiB per websocket.
func withoutBody(r *http.Request) *http.Request {
	kept := r.WithContext(r.Context()) // a shallow copy
	kept.Body, kept.GetBody = http.NoBody, nil
	return kept
}

// prepareReading sets up what the reader needs, before its goroutine starts (see serve).
func (c *conn) prepareReading() {
	c.ws.SetReadLimit(c.cfg.MaxMessageBytes)
	c.ws.SetPongHandler(func(string) error {
		c.extendReadDeadline()
		return nil
	})
	c.ws.SetPingHandler(c.answerPing)
	_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.InitTimeout))
	c.schedulePing()
}

// serve reads until the connection ends, then releases everything the connection holds and
// calls untrack. It is the reader goroutine's only frame of its own, and small on purpose: with
// thousands of connections parked in ReadMessage, the stack those readers use at a collection is
// what the runtime averages to size every new goroutine's first stack (adaptive stack start),
// and a few more bytes per reader (a closure's frame, the setup's locals) took that average
// past what fits 4 KiB: every reader then started with 8 KiB, and kept it, 4 KiB more per
// connection.
func (c *conn) serve(untrack func()) {
	defer untrack()
	defer c.shutdown()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			c.readFailed(err)
			return
		}
		if c.isClosing() {
			continue // drain until the peer answers our close frame
		}
		c.extendReadDeadline()
		c.protocol.handle(c, data)
	}
}

// readFailed closes the connection with the code that explains a failed read.
func (c *conn) readFailed(err error) {
	if c.isClosing() {
		return
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout() && !c.acked.Load():
		c.close(CloseInitTimeout, "Connection initialisation timeout")
	case errors.As(err, &netErr) && netErr.Timeout():
		c.abort(websocket.CloseGoingAway, "Keep-alive timeout: no pong within two ping intervals")
	default:
		var closeErr *websocket.CloseError
		if errors.As(err, &closeErr) {
			c.closeCode.CompareAndSwap(0, int32(closeErr.Code))
		}
		// The peer closed (gorilla has answered its close frame), the read limit was hit
		// (gorilla has sent 1009), or the network failed: nothing more can be said.
		c.markClosing()
	}
}

// extendReadDeadline gives an acknowledged peer two ping intervals to show it is alive.
func (c *conn) extendReadDeadline() {
	if !c.acked.Load() || c.isClosing() {
		return
	}
	var deadline time.Time
	if c.cfg.PingInterval > 0 {
		deadline = time.Now().Add(2 * c.cfg.PingInterval)
	}
	_ = c.ws.SetReadDeadline(deadline)
}

// schedulePing arms the ping timer. A timer rather than a goroutine per connection keeps idle
// connections small.
func (c *conn) schedulePing() {
	if c.cfg.PingInterval <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pingTimer = time.AfterFunc(c.cfg.PingInterval, c.ping)
}

// answerPing answers a client's ping frame: the writer writes the pong ahead of its next batch
// (pendingPong). The reader only hands it over, so it never waits for a write. Written through
// gorilla, the pong waited on the reader goroutine for the batch in progress, holding off the
// reader's own deadline (a client that stopped reading but still pinged was served until its
// batch timed out, not closeGrace), and a pong whose deadline passed while it waited made gorilla
// refuse every later control frame, the close frame included.
func (c *conn) answerPing(data string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return nil
	}
	c.pendingPong = &data
	if c.becomeWriterLocked() {
		go c.flush()
	}
	return nil
}

func (c *conn) ping() {
	if c.isClosing() {
		return
	}
	_ = c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.cfg.WriteTimeout))
	if c.acked.Load() {
		c.protocol.keepAlive(c)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closing {
		c.pingTimer.Reset(c.cfg.PingInterval)
	}
}

func (c *conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// markClosing drops all output at once (the peer is gone, or the connection is shutting down)
// and reports whether this call began the closing.
func (c *conn) markClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := !c.closing
	c.closing = true
	c.takeQueueLocked()
	c.pendingClose = nil
	c.wakeLocked()
	return first
}

// close ends the connection with code and reason after the messages already queued are
// written, so that, say, a connection_ack or a pong answered before a protocol violation still
// reaches the client. Nothing queued after it is sent. Only the first close has an effect.
func (c *conn) close(code int, reason string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.wakeLocked()
	if c.writing {
		// The writer sends the close frame once the queue is empty.
		c.pendingClose = &closeRequest{code: code, reason: reason}
	}
	now := !c.writing
	c.mu.Unlock()
	c.cancelOperations()
	if now {
		c.sendCloseFrame(code, reason)
	}
}

// abort ends the connection with code and reason at once, dropping what is queued: for a client
// too slow to read it and for server shutdown.
func (c *conn) abort(code int, reason string) {
	if !c.markClosing() {
		return
	}
	c.cancelOperations()
	c.sendCloseFrame(code, reason)
}

// sendCloseFrame writes the close frame, after which no data frame may follow, and lets the
// reader drain until the peer answers or closeGrace passes. The read deadline is set first: the
// frame waits for a write in progress (batchConn), and a client that stopped reading never lets
// that write finish; when the reader gives up, the connection is closed, which ends both, so a
// close takes at most closeGrace however stuck the write was.
func (c *conn) sendCloseFrame(code int, reason string) {
	c.closeSent.Store(true)
	c.closeCode.CompareAndSwap(0, int32(code))
	frame := websocket.FormatCloseMessage(code, truncateCloseReason(reason))
	_ = c.ws.SetReadDeadline(time.Now().Add(closeGrace))
	_ = c.ws.WriteControl(websocket.CloseMessage, frame, time.Now().Add(closeGrace))
}

// shutdown ends everything the connection started and waits for it.
func (c *conn) shutdown() {
	c.markClosing()
	c.mu.Lock()
	if c.pingTimer != nil {
		c.pingTimer.Stop()
	}
	release := c.releaseLifetime
	c.mu.Unlock()
	if release != nil {
		release()
	}
	c.cancel()
	c.cancelOperations()
	_ = c.ws.Close()
	c.opsWG.Wait()
	c.writerWG.Wait()
	c.cfg.Observer.closed(c.request, c.subprotocol, int(c.closeCode.Load()), c.openedAt)
}
