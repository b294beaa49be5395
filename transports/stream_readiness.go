package transports

import (
	"context"
	"sync/atomic"
)

type streamReadinessKey struct{}

// streamReadiness is one operation's way, set by its resolver, to learn without waiting whether
// its next response is ready.
type streamReadiness struct {
	ready atomic.Pointer[func(wake func()) bool]
}

// SetStreamReadiness lets the resolver of a streaming operation tell the transport how to learn,
// without waiting, that the stream's next response is ready: ready reports true when pulling it
// would not wait for an event, and otherwise arranges for wake to be called (once; it must not
// block) as soon as that changes. The websocket transport then holds no goroutine for the
// operation between events, and writes from the goroutine that queued the last one. It returns
// false, and does nothing, when ctx is not such an operation (SSE, HTTP) or already has one.
func SetStreamReadiness(ctx context.Context, ready func(wake func()) bool) bool {
	r, ok := ctx.Value(streamReadinessKey{}).(*streamReadiness)
	return ok && r.ready.CompareAndSwap(nil, &ready)
}

func withStreamReadiness(ctx context.Context) (context.Context, *streamReadiness) {
	r := &streamReadiness{}
	return context.WithValue(ctx, streamReadinessKey{}, r), r
}

// streamRun is a running operation between the goroutines that continue it: with a readiness,
// the one that finds nothing ready parks it (parked), and wake continues it on a runner.
type streamRun struct {
	c         *conn
	op        *operation
	rs        *responses
	ctx       context.Context // the operation's own cancellation: its end wakes a parked run, which then ends
	readiness *streamReadiness
	parked    atomic.Bool
	wakeFunc  func()       // wake, made once: a method value handed out per park would allocate
	prefix    resultPrefix // of its result messages
	// pending is the message the run has made and not yet queued (its connection's queue was
	// full), final when it is the `complete` or `error` that ends the operation.
	pending []byte
	final   bool
}

// park reports whether the run now waits with no goroutine: its stream has nothing ready, and
// a wake (the stream's, or the operation's end) will continue it. The caller must then leave
// the run alone: another goroutine may already be continuing it.
func (run *streamRun) park() bool {
	ready := run.readiness.ready.Load()
	if ready == nil {
		return false
	}
	run.parked.Store(true)
	if (*ready)(run.wakeFunc) || run.ctx.Err() != nil {
		// Go on in this goroutine, unless a wake has already taken the run over.
		return !run.parked.CompareAndSwap(true, false)
	}
	return true
}

// wake continues a parked run on a runner; it does nothing while the run is going on.
func (run *streamRun) wake() {
	if run.parked.CompareAndSwap(true, false) {
		wakeRunners.start(run)
	}
}
