package forkengine

import (
	"context"
	"time"
)

// EventsConfig configures an engine's event streams (Config.Events): the Broker its
// subscribers read and the Feed that fills it from the durable log, both the engine's own.
type EventsConfig struct {
	// Log is the event log the feed follows (default: Config.Store). The server gives the
	// store itself, so the feed's reads are not counted as the API's.
	Log Reader
	// QueueSize is each subscriber's queue (default DefaultSubscriberQueue); a subscriber whose
	// queue is full falls behind (RESUME_REQUIRED).
	QueueSize int
	// Wake receives a value when another process may have appended events (PostgreSQL's
	// LISTEN/NOTIFY); nil when every writer is this process.
	Wake <-chan struct{}
	// Poll is how often the log is read without a wake-up (default DefaultFeedPoll).
	Poll time.Duration
	// PageSize is the feed's events per read (default DefaultFeedPageSize).
	PageSize int
}

// newEvents builds the engine's broker and feed (started by StartEvents).
func newEvents(cfg Config) (*Broker, *Feed) {
	log := cfg.Events.Log
	if log == nil {
		log = cfg.Store
	}
	broker := NewBroker(cfg.Events.QueueSize)
	feed := NewFeed(FeedConfig{Log: log, Broker: broker, Wake: cfg.Events.Wake, Poll: cfg.Events.Poll,
		PageSize: cfg.Events.PageSize, Logger: cfg.Logger})
	return broker, feed
}

// StartEvents starts the engine's feed, which delivers to subscribers every event appended to
// the log after this call, in cursor order, until ctx ends. Until it is called, streams get no
// live events (a resumed one still replays the log). It fails only when the log's head cannot
// be read.
func (e *Engine) StartEvents(ctx context.Context) error {
	return e.feed.Start(ctx)
}

// EventPosition is the cursor of the last event the engine's feed delivered to subscribers
// (for metrics: how far the feed is behind the log's head).
func (e *Engine) EventPosition() int64 { return e.feed.Position() }

// Feed is the engine's follower of the log, the only way events reach its subscribers. Tests
// and benchmarks use it to hand it events directly; the server only starts it (StartEvents).
func (e *Engine) Feed() *Feed { return e.feed }

// Broker is where the engine's feed delivers: tests and the start-up seed count or read its
// subscribers; subscriptions are asked of the engine (FollowOperation, WorkspaceStreams).
func (e *Engine) Broker() *Broker { return e.broker }

// WorkspaceStreams follows workspaces on an engine with one view for every event: the view is
// given once, where the streams are made, and each event's view is made by it alone (a view
// may share its work among the subscribers of one event: the broker hands each of them the
// same read-only copy in turn).
type WorkspaceStreams[T any] struct {
	engine *Engine
	view   func(*Event) T
}

// NewWorkspaceStreams returns the workspace streams of e, whose events are presented by view.
func NewWorkspaceStreams[T any](e *Engine, view func(*Event) T) *WorkspaceStreams[T] {
	return &WorkspaceStreams[T]{engine: e, view: view}
}

// Follow streams the events of workspace ws from a position (followWorkspace says how: the log after a resume
// position first, then live events, each once and in cursor order).
// Errors before streaming: BAD_USER_INPUT (cursor_expired, invalid_cursor).
func (w *WorkspaceStreams[T]) Follow(ctx context.Context, ws string, from WorkspacePosition) (*Stream[T], error) {
	return followWorkspace(ctx, w.engine, w.engine.broker, ws, from, w.view)
}
