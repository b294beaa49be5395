package forkengine

import "sync"

// DefaultSubscriberQueue is the per-subscriber buffer of a Broker.
const DefaultSubscriberQueue = 256

// Broker fans published events out to in-process subscribers. Each subscriber has a bounded
// queue; Publish never blocks. A subscriber whose queue is full is closed with a lag error rather
// than silently losing events, so it can resume from its last cursor through the durable log.
type Broker struct {
	queue int
	mu    sync.Mutex
	subs  map[*Subscription]struct{}
}

// NewBroker returns a broker with the given per-subscriber queue size (<= 0: the default).
func NewBroker(queue int) *Broker {
	if queue <= 0 {
		queue = DefaultSubscriberQueue
	}
	return &Broker{queue: queue, subs: map[*Subscription]struct{}{}}
}

// Subscription receives the events of one workspace ("" for every workspace).
type Subscription struct {
	broker    *Broker
	workspace string
	c         chan Event
	once      sync.Once
	mu        sync.Mutex
	err       error
}

// Subscribe registers a subscriber. Close it when done.
func (b *Broker) Subscribe(workspaceID string) *Subscription {
	s := &Subscription{broker: b, workspace: workspaceID, c: make(chan Event, b.queue)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Publish delivers events to every matching subscriber without blocking.
func (b *Broker) Publish(events []Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		for _, ev := range events {
			if s.workspace != "" && s.workspace != ev.WorkspaceID {
				continue
			}
			select {
			case s.c <- ev:
			default:
				s.closeLocked(ReasonErrorf(CodeResumeRequired, "subscriber_lagged",
					"subscriber fell behind; resume from the last cursor received"))
			}
			if s.err != nil {
				break
			}
		}
	}
}

// Subscribers returns the number of live subscriptions (for tests and metrics).
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// C is the event channel; it is closed when the subscription ends.
func (s *Subscription) C() <-chan Event { return s.c }

// Err says why the channel closed: nil after Close, a RESUME_REQUIRED error after a lag.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription. Safe to call more than once.
func (s *Subscription) Close() {
	s.broker.mu.Lock()
	defer s.broker.mu.Unlock()
	s.closeLocked(nil)
}

// closeLocked ends the subscription; the broker's lock is held.
func (s *Subscription) closeLocked(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		delete(s.broker.subs, s)
		close(s.c)
	})
}
