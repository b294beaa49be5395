package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Bounds of the fork duration bookkeeping.
const (
	// maxTrackedForks bounds the freeze times kept for forks still running; past it, a fork's
	// freeze time is read from the store when it ends instead.
	maxTrackedForks = 100_000
	// maxPendingReads bounds the store reads of freeze times running at once; past it, a
	// terminal fork's duration is not observed (forkgraph_fork_transitions_total still counts it).
	maxPendingReads = 4
	// freezeReadTimeout bounds one such read.
	freezeReadTimeout = 5 * time.Second
)

// Publisher wraps the engine's publisher (Config.Publisher: the events of the transactions this
// instance committed, after commit). It counts every fork status change in
// forkgraph_fork_transitions_total and, at a terminal status, observes the time since the
// operation froze (its CreatedAt) in forkgraph_fork_duration_seconds. Publish never blocks: a
// freeze time this instance did not see is read from r on a bounded background goroutine.
func (t *Telemetry) Publisher(next forkengine.Publisher, r forkengine.Reader) *ForkPublisher {
	return &ForkPublisher{t: t, next: next, reader: r, frozen: map[string]time.Time{},
		reads: make(chan struct{}, maxPendingReads)}
}

// ForkPublisher is the publisher Publisher returns.
type ForkPublisher struct {
	t      *Telemetry
	next   forkengine.Publisher
	reader forkengine.Reader
	reads  chan struct{} // a slot per running freeze-time read
	wg     sync.WaitGroup

	mu     sync.Mutex
	frozen map[string]time.Time // by workspace + "/" + operation id
}

var _ forkengine.Publisher = (*ForkPublisher)(nil)

// Publish records the fork transitions among events, then hands them to the wrapped publisher.
func (p *ForkPublisher) Publish(events []forkengine.Event) {
	for i := range events {
		ev := &events[i]
		if ev.Kind == forkengine.EventForkOperationUpdated {
			p.transition(ev)
		}
	}
	if p.next != nil {
		p.next.Publish(events)
	}
}

func (p *ForkPublisher) transition(ev *forkengine.Event) {
	p.t.Metrics.forkTransitions.WithLabelValues(string(ev.Status)).Inc()
	k := ev.WorkspaceID + "/" + ev.OperationID
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Status == forkengine.StatusPrepared {
		if len(p.frozen) < maxTrackedForks {
			p.frozen[k] = ev.OccurredAt
		}
		return
	}
	if !ev.Status.Terminal() {
		return
	}
	frozenAt, ok := p.frozen[k]
	delete(p.frozen, k)
	if ok {
		p.observe(ev.Status, ev.OccurredAt.Sub(frozenAt))
		return
	}
	select {
	case p.reads <- struct{}{}:
		p.wg.Add(1)
		go p.readFrozen(*ev)
	default:
	}
}

// readFrozen observes the duration of a fork that froze before this instance saw it (another
// instance, or before a restart).
func (p *ForkPublisher) readFrozen(ev forkengine.Event) {
	defer p.wg.Done()
	defer func() { <-p.reads }()
	ctx, cancel := context.WithTimeout(context.Background(), freezeReadTimeout)
	defer cancel()
	op, err := p.reader.GetOperation(ctx, ev.WorkspaceID, ev.OperationID)
	if err != nil {
		return // the duration of this one fork is lost; its transition was counted
	}
	p.observe(ev.Status, ev.OccurredAt.Sub(op.CreatedAt))
}

func (p *ForkPublisher) observe(status forkengine.OperationStatus, d time.Duration) {
	p.t.Metrics.forkDuration.WithLabelValues(string(status)).Observe(max(d, 0).Seconds())
}

// Wait waits for the freeze-time reads started by Publish calls that have returned, so a test
// or a shutdown sees every duration.
func (p *ForkPublisher) Wait() { p.wg.Wait() }
