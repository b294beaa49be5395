package transports

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
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

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelFunc

	// Touched only by the reading goroutine (operations start after opBase is set).
	initReceived bool
	initError    error           // why InitFunc refused, for the legacy connection_error
	opBase       context.Context // InitFunc's context; operations derive from it

	acked atomic.Bool // set once connection_ack is queued; read by the ping timer too

	mu        sync.Mutex
	closing   bool
	overflow  bool
	ops       map[string]*operation
	queue     [][]byte
	writing   bool
	pingTimer *time.Timer
	// pendingClose is a close that waits for the queued messages (legacy connection_error).
	pendingClose *closeRequest

	opsWG    sync.WaitGroup // running operations
	writerWG sync.WaitGroup // writer goroutine and asynchronous closes
}

func newConn(cfg Websocket, ws *websocket.Conn, out *batchConn, exec graphql.GraphExecutor, r *http.Request) *conn {
	// The request context is cancelled when the handler returns, which is at once: keep its
	// values only.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	return &conn{
		cfg: cfg, ws: ws, out: out, exec: exec, headers: r.Header,
		ctx: ctx, cancel: cancel, opBase: ctx,
		ops: map[string]*operation{},
	}
}

// serve reads until the connection ends, then releases everything the connection holds.
func (c *conn) serve() {
	defer c.shutdown()
	c.ws.SetReadLimit(c.cfg.MaxMessageBytes)
	c.ws.SetPongHandler(func(string) error {
		c.extendReadDeadline()
		return nil
	})
	_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.InitTimeout))
	c.schedulePing()
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
		c.close(websocket.CloseGoingAway, "Keep-alive timeout: no pong within two ping intervals")
	default:
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

// markClosing stops all output and reports whether this call did it.
func (c *conn) markClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.closing = true
	c.queue = nil
	return true
}

// close sends a close frame with code and reason, cancels every operation and lets the reader
// drain until the peer answers or closeGrace passes. Only the first call has an effect.
func (c *conn) close(code int, reason string) {
	if !c.markClosing() {
		return
	}
	c.cancelOperations()
	frame := websocket.FormatCloseMessage(code, truncateCloseReason(reason))
	_ = c.ws.WriteControl(websocket.CloseMessage, frame, time.Now().Add(closeGrace))
	_ = c.ws.SetReadDeadline(time.Now().Add(closeGrace))
}

// shutdown ends everything the connection started and waits for it.
func (c *conn) shutdown() {
	c.markClosing()
	c.mu.Lock()
	if c.pingTimer != nil {
		c.pingTimer.Stop()
	}
	c.mu.Unlock()
	c.cancel()
	c.cancelOperations()
	_ = c.ws.Close()
	c.opsWG.Wait()
	c.writerWG.Wait()
}

// send queues one encoded message. It never blocks: when the queue is full the connection is
// closed with 1013, because a client this slow would otherwise hold the executor back.
func (c *conn) send(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enqueueLocked(frame)
}

func (c *conn) enqueueLocked(frame []byte) {
	if c.closing || c.overflow {
		return
	}
	if len(c.queue) >= c.cfg.SendQueue {
		c.overflow = true
		c.writerWG.Add(1)
		go func() {
			defer c.writerWG.Done()
			c.close(CloseTryAgainLater, "Client too slow: outgoing queue full; reconnect and resume")
		}()
		return
	}
	c.queue = append(c.queue, frame)
	if !c.writing {
		c.writing = true
		c.writerWG.Add(1)
		go c.flush()
	}
}

// flush writes queued messages until the queue is empty, then ends. Whatever is queued when it
// looks is written as one batch: one system call for a burst instead of one per message.
func (c *conn) flush() {
	defer c.writerWG.Done()
	for {
		c.mu.Lock()
		if c.closing || len(c.queue) == 0 {
			c.writing = false
			c.queue = nil
			pending := c.pendingClose
			c.pendingClose = nil
			c.mu.Unlock()
			if pending != nil {
				c.close(pending.code, pending.reason)
			}
			return
		}
		frames := c.queue
		c.queue = nil
		c.mu.Unlock()

		if err := c.writeFrames(frames); err != nil {
			if !c.isClosing() && !errors.Is(err, websocket.ErrCloseSent) {
				log.Printf("transports: websocket write: %v", err)
			}
			c.markClosing()
			_ = c.ws.Close()
		}
	}
}

// writeFrames writes frames as text messages in one batch, unless the connection is closing
// (its close frame may be out already).
func (c *conn) writeFrames(frames [][]byte) error {
	_ = c.out.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
	return c.out.writeText(frames, func() bool { return !c.isClosing() })
}

type closeRequest struct {
	code   int
	reason string
}

// closeAfterFlush closes once every queued message is written, so a message explaining the
// close reaches the client first.
func (c *conn) closeAfterFlush(code int, reason string) {
	c.mu.Lock()
	if c.writing && !c.closing {
		c.pendingClose = &closeRequest{code: code, reason: reason}
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.close(code, reason)
}
