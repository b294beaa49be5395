package transports

import (
	"context"
	"sync/atomic"
)

// streamRun is a running operation between the goroutines that continue it: with a readiness
// (streamside.Stream.SetReady, by the layer that resolves its stream), the one that finds
// nothing ready parks it (parked), and wake continues it on a runner.
type streamRun struct {
	c        *conn
	op       *operation
	rs       *responses
	ctx      context.Context // the operation's own cancellation: its end wakes a parked run, which then ends
	parked   atomic.Bool
	wakeFunc func()       // wake, made once: a method value handed out per park would allocate
	prefix   resultPrefix // of its result messages
	// pending is the message the run has made and not yet queued (its connection's queue was
	// full), final when it is the `complete` or `error` that ends the operation.
	pending []byte
	final   bool
}

// park reports whether the run now waits with no goroutine: its stream has nothing ready, and
// a wake (the stream's, or the operation's end) will continue it. The caller must then leave
// the run alone: another goroutine may already be continuing it.
func (run *streamRun) park() bool {
	ready := run.rs.side.Ready()
	if ready == nil {
		return false
	}
	run.parked.Store(true)
	if ready(run.wakeFunc) || run.ctx.Err() != nil {
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
