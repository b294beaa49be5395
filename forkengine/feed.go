package forkengine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of FeedConfig.
const (
	DefaultFeedPoll     = time.Second
	DefaultFeedPageSize = 500
)

// FeedConfig wires a Feed. Log and Broker are required.
type FeedConfig struct {
	Log    Reader  // the durable event log (LogEventsAfter, LogHead)
	Broker *Broker // receives every event, in cursor order
	// Wake receives a value when another process may have appended events (PostgreSQL's
	// LISTEN/NOTIFY); nil when every writer is this process.
	Wake <-chan struct{}
	// Poll is how often the log is read even without a wake-up (default DefaultFeedPoll), so a
	// lost notification only delays delivery.
	Poll     time.Duration
	PageSize int // events per read (default DefaultFeedPageSize)
	Logger   *slog.Logger
}

// Feed is one instance's follower of the durable event log: the only way events reach its
// subscribers. Events are published after commit by many goroutines, and on several instances;
// delivering them in that order would let a subscriber see cursor 7 before 6 and, remembering
// "the last cursor I sent", drop 6 for ever. So the Feed delivers in the log's cursor order
// (which the store makes commit order), from where it stood when it started: every instance's
// subscribers see the same events in the same order as a replay.
//
// A local commit's events (Publish) are the log's next ones when the first follows the feed's
// position, as they almost always are on a single instance: the feed delivers them as they are,
// without reading back what was just written (the store returns committed events exactly as the
// log reads them). Anything else (another transaction's events come first, the feed is
// delivering, another instance's commit, the poll) makes the feed read the log: other
// instances' commits wake it through Wake, or at the next poll.
type Feed struct {
	cfg      FeedConfig
	wake     chan struct{}
	started  atomic.Bool
	position atomic.Int64
	// deliverMu is held while events are handed to the broker and the position moves past them,
	// so that happens once per event, in cursor order, whoever delivers.
	deliverMu sync.Mutex
}

// NewFeed returns a feed; Start starts following.
func NewFeed(cfg FeedConfig) *Feed {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultFeedPoll
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultFeedPageSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Feed{cfg: cfg, wake: make(chan struct{}, 1)}
}

// Start reads the log's head (subscribers get what is appended after it) and follows the log
// on a goroutine of its own until ctx ends. It fails only when the head cannot be read.
func (f *Feed) Start(ctx context.Context) error {
	head, err := f.cfg.Log.LogHead(ctx)
	if err != nil {
		return err
	}
	f.position.Store(head)
	f.started.Store(true)
	go f.follow(ctx)
	return nil
}

// Publish is the engine's Publisher: a transaction of this process committed events. They are
// delivered from here when they are the log's next events (consecutive cursors, the first just
// after the feed's position); otherwise the feed reads the log, which holds them. It never waits:
// while the feed is delivering, it leaves the events to the log too.
func (f *Feed) Publish(events []Event) {
	if len(events) == 0 {
		return
	}
	if f.started.Load() && f.deliverMu.TryLock() {
		next := f.position.Load() + 1
		if consecutive(events, next) {
			f.cfg.Broker.Publish(events)
			f.position.Store(events[len(events)-1].Cursor)
			f.deliverMu.Unlock()
			return
		}
		f.deliverMu.Unlock()
	}
	f.Wake()
}

// consecutive reports whether events have the cursors first, first+1, ... in order.
func consecutive(events []Event, first int64) bool {
	for i := range events {
		if events[i].Cursor != first+int64(i) {
			return false
		}
	}
	return true
}

// Wake makes the feed read the log now, without blocking.
func (f *Feed) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Position is the cursor of the last event the feed delivered.
func (f *Feed) Position() int64 { return f.position.Load() }

// Broker is where the feed delivers.
func (f *Feed) Broker() *Broker { return f.cfg.Broker }

func (f *Feed) follow(ctx context.Context) {
	tick := time.NewTicker(f.cfg.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-f.cfg.Wake:
		case <-tick.C:
		}
		if err := f.catchUp(ctx); err != nil && ctx.Err() == nil {
			f.cfg.Logger.Warn("event feed: reading the log failed; retrying at the next poll", "after", f.Position(), "err", err)
		}
	}
}

// deliver hands the broker the events of a page read from the log that the feed has not
// delivered yet: a Publish may have delivered the first of them while the page was read.
func (f *Feed) deliver(page []Event) {
	f.deliverMu.Lock()
	defer f.deliverMu.Unlock()
	pos := f.position.Load()
	i := 0
	for i < len(page) && page[i].Cursor <= pos {
		i++
	}
	if i == len(page) {
		return
	}
	f.cfg.Broker.Publish(page[i:])
	f.position.Store(page[len(page)-1].Cursor)
}

// catchUp delivers everything the log holds after the feed's position, a page at a time.
func (f *Feed) catchUp(ctx context.Context) error {
	for {
		page, err := f.cfg.Log.LogEventsAfter(ctx, f.Position(), f.cfg.PageSize)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		f.deliver(page)
		if len(page) < f.cfg.PageSize {
			return nil
		}
	}
}
