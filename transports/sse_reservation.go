package transports

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/streamside"
)

// reservation is one single-connection stream: its operations' goroutines hand events to the
// one GET handler that writes them, through an unbuffered channel, so an operation started
// before the stream opens waits for it and a slow reader slows its operations.
type reservation struct {
	owner               *Reservations
	token, auth, client string
	events              chan streamEvent
	ctx                 context.Context // ends when the reservation does; every operation's ends with it
	cancel              context.CancelFunc
	expiry              *time.Timer          // guarded by mu: its callback may run before AfterFunc returns
	ops                 map[string]*singleOp // guarded by mu
	mu                  sync.Mutex
	open, closed        bool // guarded by mu
	draining            bool // guarded by mu: shutting down, no new operations
	running             sync.WaitGroup
}

// singleOp is a running operation; delivered is set once its `complete` reached the writer.
type singleOp struct {
	cancel       context.CancelFunc
	delivered    bool
	subscription bool
}

// drain begins the end of the stream at shutdown: no operation starts any more, subscriptions
// (which never end by themselves) are cancelled, and queries (one with @defer streams its
// fragments) run to their end, unless every operation is to stop at once (all: the credential
// ended). It returns the operations running and a channel closed once they have all ended.
func (res *reservation) drain(all bool) (map[string]*singleOp, <-chan struct{}) {
	res.mu.Lock()
	res.draining = true
	running := make(map[string]*singleOp, len(res.ops))
	for id, op := range res.ops {
		running[id] = op
		if op.subscription || all {
			op.cancel()
		}
	}
	res.mu.Unlock()
	idle := make(chan struct{})
	go func() {
		res.running.Wait()
		close(idle)
	}()
	return running, idle
}

type streamEvent struct {
	name string
	data []byte
}

// init starts the reservation's life and its expiry. The timer is set under mu: a short TTL can
// fire it before time.AfterFunc returns, and its callback (end) reads it under mu.
func (res *reservation) init(ttl time.Duration) {
	res.ctx, res.cancel = context.WithCancel(context.Background())
	res.mu.Lock()
	defer res.mu.Unlock()
	res.expiry = time.AfterFunc(ttl, func() { res.end(true) })
}

// end closes the reservation (only if its stream never opened, when unopened is set): it is
// forgotten, its operations are cancelled and waited for. It returns the ids of the operations
// it cut before their `complete` was written; nil if the reservation was already closed.
func (res *reservation) end(unopened bool) []string {
	res.mu.Lock()
	if res.closed || (unopened && res.open) {
		res.mu.Unlock()
		return nil
	}
	res.closed = true
	expiry := res.expiry
	running := make(map[string]*singleOp, len(res.ops))
	for id, op := range res.ops {
		running[id] = op
	}
	res.mu.Unlock()
	expiry.Stop()
	res.owner.remove(res)
	res.cancel()
	res.running.Wait()
	var cut []string
	for id, op := range running {
		if !op.delivered {
			cut = append(cut, id)
		}
	}
	return cut
}

// stop cancels operation id (DELETE); its stream gets nothing more for it, not even
// `complete`, as the client asked for its end. An unknown id is ignored.
func (res *reservation) stop(id string) {
	res.mu.Lock()
	op := res.ops[id]
	delete(res.ops, id)
	res.mu.Unlock()
	if op != nil {
		op.cancel()
	}
}

// serveStream is the GET: 409 if the stream is open already, else the event stream until the
// client leaves or the server shuts down, which cancels the subscriptions, lets the queries
// finish (see drain) and writes `complete` for each operation still unfinished. The
// reservation ends with its stream.
func (res *reservation) serveStream(w http.ResponseWriter, r *http.Request, t SSE) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeFailure(w, failRequest(http.StatusInternalServerError, "streaming is not supported by this server"))
		return
	}
	res.mu.Lock()
	switch {
	case res.closed:
		res.mu.Unlock()
		writeFailure(w, errNoStream)
		return
	case res.open:
		res.mu.Unlock()
		writeFailure(w, failRequest(http.StatusConflict, "the stream of this reservation is already open"))
		return
	}
	res.open = true
	expiry := res.expiry
	res.mu.Unlock()
	expiry.Stop()
	defer res.end(false)

	stream := t.openStream(w, r, flusher)
	opened := time.Now()
	t.Observer.opened(r, ProtocolSSE)
	defer t.Observer.closed(r, ProtocolSSE, 0, opened)
	var tick <-chan time.Time
	if interval := keepAliveOrDefault(t.KeepAlive); interval > 0 {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		tick = ticker.C
	}
	if life, release := t.lifetime(r.Context()); life != nil {
		defer release()
		stream.life = life
	}
	shutdown, ended := stream.shutdown, stream.lifeDone()
	var running map[string]*singleOp
	var idle <-chan struct{}
	var lastError []byte // the credential ended: every operation cut gets it before its `complete`
	for !stream.failed {
		select {
		case ev := <-res.events:
			stream.write("event: " + ev.name + "\ndata: " + string(ev.data) + "\n\n")
		case <-tick:
			stream.comment()
		case <-shutdown:
			shutdown = nil
			if running == nil {
				running, idle = res.drain(false)
			}
		case <-ended:
			ended, shutdown = nil, nil
			lastError = encodeResponse(&result{Errors: gqlerror.List{lifetimeError(stream.life)}})
			running, idle = res.drain(true)
		case <-idle:
			for id, op := range running {
				if op.delivered {
					continue
				}
				if lastError != nil {
					stream.event("next", map[string]any{"id": id, "payload": json.RawMessage(lastError)})
				}
				// a cancelled subscription: `complete` tells the client to resume
				stream.event("complete", map[string]string{"id": id})
			}
			return
		case <-r.Context().Done():
			return
		}
	}
}

// startSingle is the POST of an operation: 404 without a reservation, 400 for an unreadable
// request, no extensions.operationId, or an operation that fails to parse or validate (its
// errors in the body, as graphql-sse's reference server and GraphQL over HTTP answer), 409 for an operationId in use, 429 over MaxOperations,
// else 202 while the operation runs and reports on the stream.
func (t SSE) startSingle(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	res := t.Single.lookup(r)
	if res == nil {
		writeFailure(w, errNoStream)
		return
	}
	params, failure := readParams(r, maxBody(t.MaxBodyBytes))
	if failure != nil {
		writeFailure(w, failure)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	params.Headers = r.Header
	id, _ := params.Extensions["operationId"].(string)
	if id == "" {
		writeFailure(w, failRequest(http.StatusBadRequest, "extensions.operationId is missing"))
		return
	}
	// The operation keeps the request's values (credentials, rate-limit bucket, request id) and
	// outlives it: it ends with its reservation or a DELETE.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	ctx = graphql.StartOperationTrace(ctx)
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs == nil {
		if err := refuseDefer(opCtx); err != nil {
			errs = gqlerror.List{err}
		}
	}
	if errs != nil { // request problems are answered as GraphQL over HTTP does, not streamed
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		cancel()
		writeJSONErrors(w, "application/json; charset=utf-8", http.StatusBadRequest, resp.Errors, nil)
		return
	}
	op := &singleOp{cancel: cancel, subscription: opCtx.Operation.Operation == ast.Subscription}
	res.mu.Lock()
	switch {
	case res.closed, res.draining:
		failure = errNoStream
	case res.ops[id] != nil:
		failure = failRequest(http.StatusConflict, "an operation with id %q is already running", id)
	case len(res.ops) >= orDefault(t.Single.MaxOperations, DefaultMaxReservationOperations):
		failure = failRequest(http.StatusTooManyRequests, "this stream runs as many operations as it may")
	default:
		res.ops[id] = op
		res.running.Add(1)
	}
	res.mu.Unlock()
	if failure != nil {
		cancel()
		writeFailure(w, failure)
		return
	}
	stopAfter := context.AfterFunc(res.ctx, cancel)
	go func() {
		defer res.running.Done()
		defer stopAfter()
		defer cancel()
		op.delivered = res.run(ctx, id, exec, opCtx, t.Deferral, logs{t.Logger, t.RequestID, ctx})
		res.mu.Lock()
		if res.ops[id] == op {
			delete(res.ops, id)
		}
		res.mu.Unlock()
	}()
	w.WriteHeader(http.StatusAccepted)
}

// run executes one operation and hands its events to the stream; it reports whether its
// `complete` was handed over.
func (res *reservation) run(ctx context.Context, id string, exec graphql.GraphExecutor,
	opCtx *graphql.OperationContext, d Deferral, l logs) bool {
	idJSON, _ := json.Marshal(id)
	send := func(name string, payload []byte) bool {
		data := append([]byte(`{"id":`), idJSON...)
		if payload != nil {
			data = append(append(append(data, `,"payload":`...), payload...), '}')
		} else {
			data = append(data, '}')
		}
		select {
		case res.events <- streamEvent{name: name, data: data}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	results := make(chan []byte)
	done := make(chan gqlerror.List, 1)
	go produce(streamside.ReportEnds(graphql.WithOperationContext(ctx, opCtx)), exec, opCtx, d, l, results, done)
	for {
		select {
		case data := <-results:
			if send("next", data) {
				continue
			}
		case errs := <-done:
			if len(errs) > 0 && !send("next", encodeResponse(&result{Errors: errs})) {
				return false
			}
			return send("complete", nil)
		case <-ctx.Done():
		}
		<-done // cancelled: the producer sees it too and ends
		return false
	}
}

// encodeResponse encodes the errors that ended an operation's stream: a result without a data
// entry, as every transport sends errors that are not an execution's.
func encodeResponse(resp *result) []byte {
	b, err := json.Marshal(resp)
	if err != nil {
		return []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`)
	}
	return b
}
