package forkengine

import (
	"slices"
	"sync"
	"unique"
)

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

// Subscription receives the events of one workspace ("" for every workspace). A subscription
// made with Subscribe delivers on C; one made with SubscribeShared delivers on Events; one made
// with SubscribeFunc calls its function.
type Subscription struct {
	broker    *Broker
	workspace unique.Handle[string] // zero: every workspace
	c         chan Event            // Subscribe: a copy of each event per queue slot
	shared    chan *Event           // SubscribeShared: one read-only copy per event, shared by subscribers
	deliver   func(*Event) bool
	ended     func(error)
	closed    bool // guarded by broker.mu
	mu        sync.Mutex
	err       error
}

// Subscribe registers a subscriber whose events arrive by value on C. Close it when done.
func (b *Broker) Subscribe(workspaceID string) *Subscription {
	return b.register(&Subscription{broker: b, workspace: workspaceHandle(workspaceID), c: make(chan Event, b.queue)})
}

// SubscribeShared registers a subscriber whose events arrive on Events as pointers to one copy
// of each published event, shared by every shared subscriber: a queue slot costs a pointer, not
// an Event, which matters with thousands of subscribers. Receivers must not modify the events.
// C is nil for such a subscription. Close it when done.
func (b *Broker) SubscribeShared(workspaceID string) *Subscription {
	return b.register(&Subscription{broker: b, workspace: workspaceHandle(workspaceID), shared: make(chan *Event, b.queue)})
}

// SubscribeFunc registers a subscriber that takes each event in Publish itself, with no queue
// or goroutine of the broker's: a consumer that already has a queue (a GraphQL subscription's
// result channel) saves a goroutine per subscriber this way. deliver is called with the broker's
// lock held, for one event at a time, and gets the read-only copy shared by every shared
// subscriber; it must not block or call the broker, and returns false when it cannot take the
// event: the subscription is then closed with a RESUME_REQUIRED error. ended is called exactly
// once, also with the lock held, when the subscription closes: with nil after Close, with the
// RESUME_REQUIRED error after a lag. No deliver call follows it. C and Events are nil.
func (b *Broker) SubscribeFunc(workspaceID string, deliver func(*Event) bool, ended func(error)) *Subscription {
	return b.register(&Subscription{broker: b, workspace: workspaceHandle(workspaceID), deliver: deliver, ended: ended})
}

// workspaceHandle is ws as the broker compares it: Publish checks every subscriber for every
// event, and comparing handles compares pointers, where comparing strings read each
// subscriber's copy of its workspace id, a cold allocation of its own per subscriber.
func workspaceHandle(ws string) unique.Handle[string] {
	if ws == "" {
		return unique.Handle[string]{}
	}
	return unique.Make(ws)
}

func (b *Broker) register(s *Subscription) *Subscription {
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Publish delivers events to every matching subscriber without blocking. A subscriber whose
// queue cannot take an event is closed with a RESUME_REQUIRED error (Err) instead.
func (b *Broker) Publish(events []Event) {
	if len(events) == 0 {
		return
	}
	var shared []Event // copied on the first shared subscriber: the caller may reuse events
	workspaces := make([]unique.Handle[string], len(events))
	for i := range events {
		workspaces[i] = unique.Make(events[i].WorkspaceID)
	}
	var every unique.Handle[string]
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		for i := range events {
			if s.workspace != every && s.workspace != workspaces[i] {
				continue
			}
			if (s.shared != nil || s.deliver != nil) && shared == nil {
				shared = slices.Clone(events)
			}
			if !s.offer(events, shared, i) {
				s.closeLocked(ReasonErrorf(CodeResumeRequired, "subscriber_lagged",
					"subscriber fell behind; resume from the last cursor received"))
				break
			}
		}
	}
}

// offer queues event i without blocking and reports whether the queue took it.
func (s *Subscription) offer(events, shared []Event, i int) bool {
	if s.deliver != nil {
		return s.deliver(&shared[i])
	}
	if s.shared != nil {
		select {
		case s.shared <- &shared[i]:
			return true
		default:
			return false
		}
	}
	select {
	case s.c <- events[i]:
		return true
	default:
		return false
	}
}

// QueueSize is the per-subscriber queue of Subscribe and SubscribeShared subscriptions; a
// SubscribeFunc consumer sizes its own queue by it.
func (b *Broker) QueueSize() int { return b.queue }

// Subscribers returns the number of live subscriptions (for tests and metrics).
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// C is the event channel of a Subscribe subscription; it is closed when the subscription ends.
func (s *Subscription) C() <-chan Event { return s.c }

// Events is the event channel of a SubscribeShared subscription; it is closed when the
// subscription ends. The events are shared with other subscribers: read them, do not modify.
func (s *Subscription) Events() <-chan *Event { return s.shared }

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

// closeLocked ends the subscription once; the broker's lock is held, so no Publish can send on
// the channel after it is closed.
func (s *Subscription) closeLocked(err error) {
	if s.closed {
		return
	}
	s.closed = true
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	delete(s.broker.subs, s)
	switch {
	case s.deliver != nil:
		if s.ended != nil {
			s.ended(err)
		}
	case s.shared != nil:
		close(s.shared)
	case s.c != nil:
		close(s.c)
	}
}
