package transports

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/streamside"
)

// DefaultSSEKeepAlive is how often an idle SSE stream sends a comment line, so proxies and load
// balancers do not time it out.
const DefaultSSEKeepAlive = 12 * time.Second

// SSE serves any operation over Server-Sent Events in graphql-sse's "distinct connections" mode:
// a GET or POST with `Accept: text/event-stream` gets one `next` event per result, then a
// `complete` event. The client ends a subscription by closing the connection. When the
// http.Server shuts down, a running stream's operation is cancelled and the stream ends with
// `complete`, so the client knows to reconnect elsewhere and resume.
//
// Status codes: 200 with an event stream (validation errors included: they arrive as a `next`
// event, as graphql-sse requires); 400 for an unreadable request (bad JSON, no query, variables
// not an object); 405 with `Allow: POST` for a mutation over GET; 413 for a body larger than
// MaxBodyBytes; 415 for a POST whose Content-Type is not application/json.
type SSE struct {
	// KeepAlive is the interval of keep-alive comments; negative disables. Default 12s.
	KeepAlive time.Duration
	// MaxBodyBytes limits a POST body. Default 1 MiB.
	MaxBodyBytes int64
	// WriteTimeout bounds the write of one event; a client that stops reading is disconnected
	// then (it resumes with its last cursor), so it holds at most one event and the socket's
	// buffers. Default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// Observer, when set, is told when a stream starts and ends.
	Observer *Observer
	// Logger receives what the transport cannot tell a client (panics, unencodable results,
	// failed writes); nil: slog.Default(). RequestID, when set, names the request each line
	// comes from (access.RequestID).
	Logger    *slog.Logger
	RequestID func(ctx context.Context) string
	// Single, when set, also serves graphql-sse's "single connection mode" (PUT reserves a
	// stream; requests carrying its token use it), holding the reservations; see Reservations.
	Single *Reservations
	// Deferral leaves the deferred fields out of a query's first payload (see Deferral).
	Deferral Deferral
	// Lifetime, when set, ends a stream when the credential of the request that opened it does:
	// its subscriptions get a last `next` event with the error, then `complete`; see Lifetime.
	Lifetime Lifetime
}

var _ graphql.Transport = SSE{}

// Supports reports whether r is a GET or POST whose first choice is an event stream, or, with
// Single set, a request of single-connection mode: a PUT, a DELETE, or one carrying a token.
func (t SSE) Supports(r *http.Request) bool {
	if t.Single != nil && !websocket.IsWebSocketUpgrade(r) {
		switch r.Method {
		case http.MethodPut, http.MethodDelete:
			return true
		case http.MethodGet, http.MethodPost:
			if streamToken(r) != "" {
				return true
			}
		}
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return false
	}
	return prefersEventStream(r.Header.Get("Accept")) && !websocket.IsWebSocketUpgrade(r)
}

// openStream answers 200 with the event-stream headers and returns the stream that writes to w,
// in either mode. It registers for the server's shutdown signal before the headers go out: a
// client that has its 200 must be able to count on a `complete` at shutdown; registered after, a
// Shutdown starting in between went unseen and the stream was cut at the end of the grace period.
func (t SSE) openStream(w http.ResponseWriter, r *http.Request, flusher http.Flusher) sseStream {
	shutdown := shutdownSignal(r)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	stream := sseStream{w: w, flush: flusher.Flush, keepAlive: t.KeepAlive, rc: http.NewResponseController(w),
		writeTimeout: t.WriteTimeout, shutdown: shutdown, deferral: t.Deferral, logs: logs{t.Logger, t.RequestID, r.Context()}}
	if stream.writeTimeout <= 0 {
		stream.writeTimeout = DefaultWriteTimeout
	}
	return stream
}

// Do reads the request, then streams the operation's results until it ends or the client leaves.
func (t SSE) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if t.Single != nil && t.serveSingle(w, r, exec) {
		return
	}
	start := graphql.Now()
	params, failure := readParams(r, maxBody(t.MaxBodyBytes))
	if failure != nil {
		writeJSONErrors(w, "application/json; charset=utf-8", failure.status, failure.errs, failure.header)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	params.Headers = r.Header

	ctx, cancel := context.WithCancel(graphql.StartOperationTrace(r.Context()))
	defer cancel()
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs == nil && r.Method == http.MethodGet && opCtx.Operation.Operation == ast.Mutation {
		writeMutationOverGET(w, "application/json; charset=utf-8")
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeJSONErrors(w, "application/json; charset=utf-8", http.StatusInternalServerError,
			gqlerror.List{codedf(CodeInternal, "streaming is not supported by this server")}, nil)
		return
	}
	stream := t.openStream(w, r, flusher)
	opened := time.Now()
	t.Observer.opened(r, ProtocolSSE)
	defer t.Observer.closed(r, ProtocolSSE, 0, opened)
	if life, release := t.lifetime(r.Context()); life != nil {
		defer release()
		stream.life = life
	}
	if errs == nil {
		if err := refuseDefer(opCtx); err != nil {
			errs = gqlerror.List{err}
		}
	}
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		stream.event("next", eventPayload(resp))
		stream.event("complete", nil)
		return
	}
	stream.run(ctx, cancel, exec, opCtx)
}

// sseStream writes events; only the handler's goroutine touches it.
type sseStream struct {
	w            http.ResponseWriter
	flush        func()
	keepAlive    time.Duration
	rc           *http.ResponseController
	writeTimeout time.Duration
	shutdown     <-chan struct{}
	deferral     Deferral
	life         context.Context // ends with the credential (SSE.Lifetime); nil: never
	failed       bool
	logs         logs
}

// lifetime is the credential lifetime of a stream opened by a request whose context ctx is.
func (t SSE) lifetime(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.Lifetime == nil {
		return nil, nil
	}
	return t.Lifetime(ctx)
}

// lifeDone is closed when the stream's credential ends; nil (never) without a lifetime.
func (s *sseStream) lifeDone() <-chan struct{} {
	if s.life == nil {
		return nil
	}
	return s.life.Done()
}

// run executes the operation in a goroutine and writes its results, keep-alive comments
// between them, until the results end or the client disconnects.
func (s *sseStream) run(ctx context.Context, cancel context.CancelFunc, exec graphql.GraphExecutor, opCtx *graphql.OperationContext) {
	results := make(chan []byte)
	done := make(chan gqlerror.List, 1)
	go produce(streamside.ReportEnds(graphql.WithOperationContext(ctx, opCtx)), exec, opCtx, s.deferral, s.logs, results, done)
	// A subscription never ends by itself, so shutdown cancels it; a query (one with @defer
	// streams its fragments) does, and finishes within the grace period like any request.
	shutdown, ended := s.shutdown, s.lifeDone()
	if opCtx.Operation.Operation != ast.Subscription {
		shutdown, ended = nil, nil
	}
	var tick <-chan time.Time
	if interval := keepAliveOrDefault(s.keepAlive); interval > 0 {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		tick = ticker.C
	}
	for {
		select {
		case data := <-results:
			s.write("event: next\ndata: " + string(data) + "\n\n")
		case errs := <-done:
			if len(errs) > 0 {
				s.event("next", &result{Errors: errs})
			}
			s.event("complete", nil)
			return
		case <-tick:
			s.comment()
		case <-shutdown:
			s.stop(cancel, results, done)
			s.event("complete", nil)
			return
		case <-ended: // the credential expired or was revoked: say so, then end
			s.stop(cancel, results, done)
			s.event("next", &result{Errors: gqlerror.List{lifetimeError(s.life)}})
			s.event("complete", nil)
			return
		case <-ctx.Done():
			<-done // the producer sees the same cancellation and ends
			return
		}
		if s.failed { // the client is gone: stop the producer and wait for it
			cancel()
			<-done
			return
		}
	}
}

// stop cancels the producer and waits for it to end; what it still sends is dropped.
func (s *sseStream) stop(cancel context.CancelFunc, results <-chan []byte, done <-chan gqlerror.List) {
	cancel()
	for {
		select {
		case <-results:
		case <-done:
			return
		}
	}
}

// produce pulls the operation's responses and hands them, encoded, to the writer: generated
// subscription code reuses one buffer for every response, so a response is only valid until the
// next is pulled. done receives the errors that ended the stream (streamside.Stream.Err), or nil.
func produce(ctx context.Context, exec graphql.GraphExecutor, opCtx *graphql.OperationContext, d Deferral, l logs,
	results chan<- []byte, done chan<- gqlerror.List) {
	defer func() {
		if r := recover(); r != nil {
			l.error("transports: panic in SSE operation", "panic", r)
			done <- gqlerror.List{{Message: "internal server error", Extensions: map[string]any{"code": "INTERNAL_SERVER_ERROR"}}}
		}
	}()
	rs := dispatch(ctx, exec, opCtx, d)
	defer rs.close()
	for {
		payload := rs.next()
		if payload == nil {
			break
		}
		data, err := json.Marshal(eventPayload(payload))
		if err != nil {
			l.error("transports: encode SSE result", "err", err)
			data = []byte(`{"errors":[{"message":"internal server error"}]}`)
		}
		select {
		case results <- data:
		case <-ctx.Done():
			done <- nil
			return
		}
	}
	done <- rs.side.Err()
}

// eventPayload is what a `next` event carries for payload: a response with errors and no data
// (a request refused before execution: parse, validation, limits, an operation interceptor's
// refusal) has no data entry, as GraphQL over HTTP answers it (GraphQL spec §7.1.2: data is
// present only if execution started), where gqlgen's Response would write "data": null. Every
// other payload, results with data or null data after field errors included, is unchanged.
func eventPayload(payload any) any {
	resp, ok := payload.(*graphql.Response)
	if !ok || len(resp.Data) > 0 || len(resp.Errors) == 0 || resp.Label != "" || resp.Path != nil || resp.HasNext != nil {
		return payload
	}
	return &result{Errors: resp.Errors, Extensions: resp.Extensions}
}

func keepAliveOrDefault(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultSSEKeepAlive
	}
	return d
}

// event writes one SSE event; data nil writes the empty data line graphql-sse asks for, which
// EventSource needs to dispatch the event.
func (s *sseStream) event(name string, data any) {
	payload := ""
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			s.logs.error("transports: encode SSE event", "event", name, "err", err)
			b = []byte(`{"errors":[{"message":"internal server error"}]}`)
		}
		payload = " " + string(b)
	}
	s.write(fmt.Sprintf("event: %s\ndata:%s\n\n", name, payload))
}

func (s *sseStream) comment() { s.write(":\n\n") }

func (s *sseStream) write(text string) {
	if s.failed {
		return
	}
	if s.rc != nil {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.writeTimeout))
	}
	if _, err := s.w.Write([]byte(text)); err != nil {
		s.failed = true
		return
	}
	s.flush()
}
