package forkengine

import (
	"context"
	"log/slog"
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
// position, as they mostly are on a single instance: the feed then delivers them as they
// are, without reading back what was just written (the store returns committed events exactly as
// the log reads them). Anything else (another transaction's events come first, another
// instance's commit, the poll) makes the feed read the log: other instances' commits wake it
// through Wake, or at the next poll. One goroutine delivers, so each event goes out once, in
// cursor order.
type Feed struct {
	cfg      FeedConfig
	wake     chan struct{}
	local    chan []Event // the events of this process's commits, for the follower
	position atomic.Int64
}

// localBacklog is how many commits' events wait for the follower before Publish leaves the
// next ones to the log.
const localBacklog = 256

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
	return &Feed{cfg: cfg, wake: make(chan struct{}, 1), local: make(chan []Event, localBacklog)}
}

// Start reads the log's head (subscribers get what is appended after it) and follows the log
// on a goroutine of its own until ctx ends. It fails only when the head cannot be read.
func (f *Feed) Start(ctx context.Context) error {
	head, err := f.cfg.Log.LogHead(ctx)
	if err != nil {
		return err
	}
	f.position.Store(head)
	go f.follow(ctx)
	return nil
}

// Publish is the engine's Publisher: a transaction of this process committed events. It hands
// them to the follower, which delivers them itself when they are the log's next events and reads
// the log otherwise. It never blocks: when the follower is that far behind, the log has them.
func (f *Feed) Publish(events []Event) {
	if len(events) == 0 {
		return
	}
	select {
	case f.local <- events:
	default:
		f.Wake()
	}
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
		case events := <-f.local:
			if f.deliverLocal(events) {
				continue
			}
		case <-f.wake:
		case <-f.cfg.Wake:
		case <-tick.C:
		}
		if err := f.catchUp(ctx); err != nil && ctx.Err() == nil {
			f.cfg.Logger.Warn("event feed: reading the log failed; retrying at the next poll", "after", f.Position(), "err", err)
		}
	}
}

// deliverLocal delivers a local commit's events that the feed has not delivered yet when they
// are the log's next ones (consecutive cursors from just after the position). It reports false,
// delivering nothing, when an event the feed has not seen comes before them: the log has it.
func (f *Feed) deliverLocal(events []Event) bool {
	pos := f.position.Load()
	for len(events) > 0 && events[0].Cursor <= pos {
		events = events[1:] // delivered from the log already, with what came before them
	}
	for i := range events {
		if events[i].Cursor != pos+1+int64(i) {
			return false
		}
	}
	if len(events) > 0 {
		f.cfg.Broker.Publish(events)
		f.position.Store(events[len(events)-1].Cursor)
	}
	return true
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
		f.cfg.Broker.Publish(page)
		f.position.Store(page[len(page)-1].Cursor)
		if len(page) < f.cfg.PageSize {
			return nil
		}
	}
}
