package telemetry

import (
	"context"
	"sync"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Bounds of the fork bookkeeping.
const (
	// maxTrackedForks bounds the running forks whose freeze time and status are kept; past it, a
	// fork is treated as one this instance did not see start.
	maxTrackedForks = 100_000
	// maxRecentTerminal is how many forks that ended here are remembered, so a later event (an
	// acknowledgement, or reconciliation moving an unknown fork on) is recognised without
	// reading the store.
	maxRecentTerminal = 10_000
	// maxPendingReads bounds the store reads running at once for forks this instance did not see
	// start; past it, such an event is not counted.
	maxPendingReads = 16
	// forkReadTimeout bounds one such read.
	forkReadTimeout = 5 * time.Second
)

// Publisher wraps the engine's publisher (Config.Publisher: the events of the transactions this
// instance committed, after commit). It counts every fork status change in
// forkgraph_fork_transitions_total and, at a terminal status, observes the time since the
// operation froze (its CreatedAt) in forkgraph_fork_duration_seconds. An event that changes no
// status (an acknowledgement of a committed fork) is not counted.
//
// Publish never blocks on the store: for a fork this instance did not see freeze (another
// instance's, or one from before a restart) the operation is read on a bounded background
// goroutine, to learn its freeze time and whether the event was its acknowledgement.
func (t *Telemetry) Publisher(next forkengine.Publisher, r forkengine.Reader) *ForkPublisher {
	return &ForkPublisher{t: t, next: next, reader: r, forks: map[forkengine.OperationKey]trackedFork{},
		reads: make(chan struct{}, maxPendingReads)}
}

// ForkPublisher is the publisher Publisher returns.
type ForkPublisher struct {
	t      *Telemetry
	next   forkengine.Publisher
	reader forkengine.Reader
	reads  chan struct{} // a slot per running store read
	wg     sync.WaitGroup

	mu         sync.Mutex
	forks      map[forkengine.OperationKey]trackedFork
	endedOrder []forkengine.OperationKey // forks that reached a terminal status, oldest first, for eviction
}

// trackedFork is what is known of a fork this instance saw freeze.
type trackedFork struct {
	frozenAt time.Time
	status   forkengine.OperationStatus // the last one published
}

var _ forkengine.Publisher = (*ForkPublisher)(nil)

// Publish records the fork transitions among events, then hands them to the wrapped publisher.
func (p *ForkPublisher) Publish(events []forkengine.Event) {
	for i := range events {
		if events[i].Kind == forkengine.EventForkOperationUpdated {
			p.record(events[i])
		}
	}
	if p.next != nil {
		p.next.Publish(events)
	}
}

// record counts ev when it is a status change this instance can recognise at once, and hands
// it to a background read otherwise. A terminal status is not always the last: reconciliation
// moves an unknown fork on to provider_accepted and committed, or to failed.
func (p *ForkPublisher) record(ev forkengine.Event) {
	k := forkengine.OperationKey{WorkspaceID: ev.WorkspaceID, ID: ev.OperationID}
	p.mu.Lock()
	defer p.mu.Unlock()
	fork, seen := p.forks[k]
	switch {
	case ev.Status == forkengine.StatusPrepared:
		if len(p.forks) < maxTrackedForks+maxRecentTerminal {
			p.forks[k] = trackedFork{frozenAt: ev.OccurredAt, status: ev.Status}
		}
		p.transition(ev.Status)
	case seen && fork.status == ev.Status:
		// not a status change: an acknowledgement of a committed fork
	case seen:
		fork.status = ev.Status
		p.forks[k] = fork
		p.transition(ev.Status)
		if ev.Status.Terminal() {
			p.duration(ev.Status, ev.OccurredAt.Sub(fork.frozenAt))
			p.endedLocked(k)
		}
	case ev.Status.Terminal():
		p.readLocked(ev)
	default:
		p.transition(ev.Status) // a fork resumed here after freezing elsewhere
	}
}

// endedLocked queues k for eviction once maxRecentTerminal forks have ended after it.
func (p *ForkPublisher) endedLocked(k forkengine.OperationKey) {
	p.endedOrder = append(p.endedOrder, k)
	if len(p.endedOrder) > maxRecentTerminal {
		if old := p.endedOrder[0]; p.forks[old].status.Terminal() {
			delete(p.forks, old)
		}
		p.endedOrder = p.endedOrder[1:]
	}
}

// readLocked starts the background read of a terminal event's operation, if a slot is free.
func (p *ForkPublisher) readLocked(ev forkengine.Event) {
	select {
	case p.reads <- struct{}{}:
		p.wg.Add(1)
		go p.readTerminal(ev)
	default:
	}
}

// readTerminal decides a terminal event of a fork this instance did not see freeze: the
// acknowledgement of a committed fork stamps AcknowledgedAt with the event's time and is no
// transition; anything else is one, observed from the operation's CreatedAt.
func (p *ForkPublisher) readTerminal(ev forkengine.Event) {
	defer p.wg.Done()
	defer func() { <-p.reads }()
	ctx, cancel := context.WithTimeout(context.Background(), forkReadTimeout)
	defer cancel()
	op, err := p.reader.GetOperation(ctx, ev.WorkspaceID, ev.OperationID)
	if err != nil {
		return // this one event is not counted
	}
	if op.AcknowledgedAt != nil && op.AcknowledgedAt.Equal(ev.OccurredAt) {
		return
	}
	p.transition(ev.Status)
	p.duration(ev.Status, ev.OccurredAt.Sub(op.CreatedAt))
}

func (p *ForkPublisher) transition(status forkengine.OperationStatus) {
	p.t.Metrics.forkTransitions.WithLabelValues(string(status)).Inc()
}

func (p *ForkPublisher) duration(status forkengine.OperationStatus, d time.Duration) {
	p.t.Metrics.forkDuration.WithLabelValues(string(status)).Observe(max(d, 0).Seconds())
}

// Wait waits for the store reads started by Publish calls that have returned, so a test or a
// shutdown sees every count.
func (p *ForkPublisher) Wait() { p.wg.Wait() }
