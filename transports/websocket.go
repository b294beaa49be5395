package transports

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Websocket subprotocols this transport speaks, in the order it prefers them.
const (
	// SubprotocolTransportWS is the graphql-ws project's protocol (graphql-transport-ws).
	SubprotocolTransportWS = "graphql-transport-ws"
	// SubprotocolLegacyWS is subscriptions-transport-ws's protocol, kept for old clients.
	SubprotocolLegacyWS = "graphql-ws"
)

// Defaults applied to zero-valued Websocket fields.
const (
	DefaultInitTimeout      = 3 * time.Second
	DefaultPingInterval     = 15 * time.Second
	DefaultMaxMessageBytes  = 1 << 20
	DefaultMaxSubscriptions = 100
	DefaultSendQueue        = 1024
	// DefaultSendQueueBytes bounds the bytes waiting for one connection: 20 subscriptions of
	// 100 KB events held 124 MB for a client that never read when only messages were counted.
	DefaultSendQueueBytes = 4 << 20
	DefaultWriteTimeout   = 10 * time.Second
	// DefaultSlowClientTimeout is below DefaultWriteTimeout, so a stalled client hears 1013
	// before its write would time out.
	DefaultSlowClientTimeout = 5 * time.Second
)

// InitFunc authorises a connection from its connection_init payload (nil when the client sent
// none). It returns the context every operation of the connection runs in (derive it from ctx)
// and an optional payload for connection_ack. An error rejects the connection: close code 4403
// (Forbidden) on graphql-transport-ws, connection_error then 4403 on the legacy protocol.
type InitFunc func(ctx context.Context, payload map[string]any) (context.Context, *map[string]any, error)

// Websocket is a gqlgen transport for GraphQL over websockets. Its zero value is ready to use;
// zero fields take the Default* values. It negotiates graphql-transport-ws or, for old clients,
// graphql-ws, and refuses any other (or a missing) subprotocol with HTTP 400 before upgrading.
type Websocket struct {
	// InitFunc authorises connection_init; nil accepts every connection.
	InitFunc InitFunc
	// Lifetime, when set, ends the connection when the credential InitFunc accepted does (close
	// 4403, the error's code as the reason); see Lifetime.
	Lifetime Lifetime
	// OperationLimiter, when set, is asked before each subscribe (legacy: start) of an
	// acknowledged connection, with the context InitFunc returned, e.g. to charge the operation
	// to the client's rate limit. An error refuses that operation alone: the client gets an
	// error message for its id carrying the error (a *gqlerror.Error keeps its extensions) and
	// the connection stays open.
	OperationLimiter func(ctx context.Context) error
	// InitTimeout bounds the wait for connection_init (close 4408). Default 3s.
	InitTimeout time.Duration
	// PingInterval is how often the server sends websocket ping frames; a peer that answers
	// nothing (no pong, no message) for two intervals is disconnected. Negative disables.
	PingInterval time.Duration
	// MaxMessageBytes limits one incoming message; a bigger one closes with 1009. Default 1 MiB.
	MaxMessageBytes int64
	// MaxSubscriptions limits the operations running at once on one connection; one more gets
	// an error message for its id and the connection stays open. Default 100.
	MaxSubscriptions int
	// SendQueue bounds the messages waiting to be written to one connection. While it is full,
	// producers (operations, the reader) wait for the writer to take it. Default: the larger
	// of DefaultSendQueue and 4 × MaxSubscriptions.
	SendQueue int
	// SendQueueBytes bounds the bytes of the messages waiting to be written to one connection,
	// the batch being written included; producers wait for room as for SendQueue, and a client
	// that stops reading is closed with 1013 after SlowClientTimeout. A single message larger
	// than the bound is sent once everything before it is written. Default 4 MiB.
	SendQueueBytes int64
	// SlowClientTimeout is how long the queue may stay full while the current write makes no
	// progress; then that connection alone is closed with 1013 (Try Again Later) so the client
	// reconnects and resumes. A client that reads promptly is never closed for slowness, and
	// one that stops reading never holds the executor or other connections longer. Default 5s.
	SlowClientTimeout time.Duration
	// WriteTimeout bounds the write of one frame. Default 10s.
	WriteTimeout time.Duration
	// Observer, when set, is told about connections, queued bytes and dropped results.
	Observer *Observer
	// Logger receives what the transport cannot tell a client (panics, unencodable results,
	// failed writes); nil: slog.Default(). RequestID, when set, names the request each line
	// comes from (access.RequestID).
	Logger    *slog.Logger
	RequestID func(ctx context.Context) string
	// Upgrader performs the handshake. nil uses a same-origin check (requests without an Origin
	// header, such as non-browser clients, pass) and small pooled buffers. Set
	// Upgrader.CheckOrigin to allow other origins, e.g. during development.
	Upgrader *websocket.Upgrader
	// CheckOrigin, when set, decides the Origin of an upgrade for the default upgrader (it
	// replaces the same-origin check), e.g. access.Origins.Allows.
	CheckOrigin func(r *http.Request) bool
	// Deferral leaves the deferred fields out of a query's first payload (see Deferral).
	Deferral Deferral
}

var _ graphql.Transport = Websocket{}

// observeConn, when set (by tests), sees every new connection.
var observeConn func(*conn)

// writeBuffers is shared by every connection of the default upgrader, so an idle connection
// holds no write buffer.
var writeBuffers = &sync.Pool{}

// Supports reports whether r asks for a websocket upgrade.
func (t Websocket) Supports(r *http.Request) bool {
	return websocket.IsWebSocketUpgrade(r)
}

// Do negotiates the subprotocol, upgrades, and hands the connection to a goroutine of its own,
// so that net/http's request goroutine, its stack and its buffers are released while the
// connection lives. Operations run in the request's context values, not its cancellation; the
// connection closes (1001) when the http.Server shuts down.
func (t Websocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	protocol := negotiateSubprotocol(websocket.Subprotocols(r))
	if protocol == "" {
		writeJSONErrors(w, mediaJSON, http.StatusBadRequest, gqlerror.List{codedf(CodeBadRequest,
			"unsupported or missing websocket subprotocol (Sec-WebSocket-Protocol); supported: %s, %s",
			SubprotocolTransportWS, SubprotocolLegacyWS)}, nil)
		return
	}
	upgrader := t.upgrader()
	upgrader.Subprotocols = []string{protocol}
	batching := &batchingWriter{ResponseWriter: w}
	ws, err := upgrader.Upgrade(batching, r, nil)
	if err != nil {
		return // the upgrader has already answered with an HTTP error
	}
	c := newConn(t.withDefaults(), ws, batching.conn, exec, r)
	if observeConn != nil {
		observeConn(c)
	}
	c.subprotocol = protocol
	t.Observer.opened(r, protocol)
	if protocol == SubprotocolLegacyWS {
		c.protocol = legacyProtocol{}
	} else {
		c.protocol = transportProtocol{}
	}
	c.prepareReading()
	untrack, open := track(r, c)
	if !open {
		c.abort(websocket.CloseGoingAway, "Server shutting down")
	}
	go c.serve(untrack)
}

// negotiateSubprotocol picks graphql-transport-ws when offered, else graphql-ws, else "".
func negotiateSubprotocol(offered []string) string {
	var legacy bool
	for _, p := range offered {
		switch strings.TrimSpace(p) {
		case SubprotocolTransportWS:
			return SubprotocolTransportWS
		case SubprotocolLegacyWS:
			legacy = true
		}
	}
	if legacy {
		return SubprotocolLegacyWS
	}
	return ""
}

func (t Websocket) upgrader() websocket.Upgrader {
	if t.Upgrader != nil {
		return *t.Upgrader
	}
	return websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		ReadBufferSize:   1024,
		WriteBufferSize:  4096,
		WriteBufferPool:  writeBuffers,
		CheckOrigin:      t.CheckOrigin,
	}
}

func (t Websocket) withDefaults() Websocket {
	if t.InitTimeout <= 0 {
		t.InitTimeout = DefaultInitTimeout
	}
	if t.PingInterval == 0 {
		t.PingInterval = DefaultPingInterval
	}
	if t.MaxMessageBytes <= 0 {
		t.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if t.MaxSubscriptions <= 0 {
		t.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if t.SendQueue <= 0 {
		t.SendQueue = max(DefaultSendQueue, 4*t.MaxSubscriptions)
	}
	if t.SendQueueBytes <= 0 {
		t.SendQueueBytes = DefaultSendQueueBytes
	}
	if t.SlowClientTimeout <= 0 {
		t.SlowClientTimeout = DefaultSlowClientTimeout
	}
	if t.WriteTimeout <= 0 {
		t.WriteTimeout = DefaultWriteTimeout
	}
	return t
}
