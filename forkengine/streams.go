package forkengine

import (
	"context"
	"fmt"
	"sync"
)

// replayPage is how many logged events one replay read returns.
const replayPage = 100

// Stream is what a subscription reads: values on C until it is closed, then Err says why it
// ended (nil: the subscriber left or the stream completed). LastCursor is the cursor of the last
// event put on C, for a client told to resume.
type Stream[T any] struct {
	C <-chan T

	mu   sync.Mutex
	err  error
	last int64
	// For OnReady, on live streams only: wake is called once C has a value or is closed.
	live   bool
	closed bool
	wake   func()
}

// OnReady reports whether C has a value or is closed, so a receive would not wait; when not, it
// arranges for wake to be called (once, from the publisher's goroutine: it must not block) as
// soon as one is. It lets a consumer wait without a goroutine of its own: with thousands of
// subscribers a parked goroutine each is most of their memory. A stream that cannot tell (one
// that replays first) always reports true; its consumer receives as usual.
func (s *Stream[T]) OnReady(wake func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.live || s.closed || len(s.C) > 0 {
		return true
	}
	s.wake = wake
	return false
}

// offer puts v on out if that does not wait, records its cursor and takes the waiting
// consumer's wake (nil: none), all under one lock (it runs once per subscriber of every event):
// a consumer that has received v and then asks LastCursor gets v's cursor, never the one before.
func (s *Stream[T]) offer(out chan<- T, v T, cursor int64) (sent bool, wake func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case out <- v:
	default:
		return false, nil
	}
	s.last = cursor
	wake = s.wake
	s.wake = nil
	return true, wake
}

// closedWake records that C is closed and takes the waiting consumer's wake (nil: none).
func (s *Stream[T]) closedWake() func() {
	return s.takeWake(func() { s.closed = true })
}

// takeWake runs record and takes the waiting consumer's wake (nil: none), under the lock OnReady
// takes, so a consumer either sees what record recorded or has its wake taken.
func (s *Stream[T]) takeWake(record func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	record()
	wake := s.wake
	s.wake = nil
	return wake
}

// Err is the error that ended the stream, once C is closed: RESUME_REQUIRED when the subscriber
// fell behind, or a failed read.
func (s *Stream[T]) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// LastCursor is the cursor of the last event put on C (0: none yet): once a consumer has
// received an event, at least that event's (the event being put, while its send waits).
func (s *Stream[T]) LastCursor() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *Stream[T]) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// put sends v on out unless the subscriber goes away, recording its cursor before the send: the
// consumer may read LastCursor the moment it has received v, before this goroutine runs again.
// When the send fails the previous cursor is restored (nothing was put on C).
func (s *Stream[T]) put(ctx context.Context, out chan<- T, v T, cursor int64) bool {
	s.mu.Lock()
	before := s.last
	s.last = cursor
	s.mu.Unlock()
	if send(ctx, out, v) {
		return true
	}
	s.mu.Lock()
	s.last = before
	s.mu.Unlock()
	return false
}

// WorkspacePosition says where a workspace stream starts: Resume false is live events only;
// Resume true replays every logged event after Cursor (0: the whole log) and then goes live.
type WorkspacePosition struct {
	Cursor int64
	Resume bool
}

// followWorkspace (WorkspaceStreams.Follow) streams a workspace's events as view maps them: with a resume position, the
// logged events after it first, then live ones, each exactly once and in cursor order; without,
// live events only. Live events come from b, which a Feed fills in log order, so live delivery
// is exactly the replay. A subscriber that cannot keep up (its queue of b.QueueSize() is full)
// is ended with RESUME_REQUIRED (reason subscriber_lagged); LastCursor is where to resume.
// Errors before streaming: BAD_USER_INPUT for a cursor the log cannot resume from
// (cursor_expired, invalid_cursor).
func followWorkspace[T any](ctx context.Context, e *Engine, b *Broker, ws string, from WorkspacePosition, view func(*Event) T) (*Stream[T], error) {
	if !from.Resume {
		return liveWorkspace(ctx, b, ws, view), nil
	}
	if err := e.CheckResumeCursor(ctx, ws, from.Cursor); err != nil {
		return nil, err
	}
	out := make(chan T, 1)
	s := &Stream[T]{C: out}
	go func() {
		defer close(out)
		// Replay the backlog before subscribing, so a long replay does not fill the live queue
		// (and end the stream with RESUME_REQUIRED) while writers keep committing. Then subscribe
		// and replay once more from where the first pass ended: an event committed before the
		// subscription is in that second pass, one committed after it arrives live, and one in both
		// is dropped at the seam below.
		last, err := replayWorkspace(ctx, e.store, ws, from.Cursor, out, s, view)
		if err != nil {
			s.fail(err)
			return
		}
		sub := b.SubscribeShared(ws)
		defer sub.Close()
		if last, err = replayWorkspace(ctx, e.store, ws, last, out, s, view); err != nil {
			s.fail(err)
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.Events():
				if !ok {
					s.fail(lagError(sub.Err()))
					return
				}
				if ev.Cursor <= last { // the replay sent it already
					continue
				}
				if !s.put(ctx, out, view(ev), ev.Cursor) {
					return
				}
				last = ev.Cursor
			}
		}
	}()
	return s, nil
}

// liveWorkspace streams live events with no goroutine of its own (with 10,000 subscribers a
// goroutine each is the largest share of their memory): the broker hands each event to the
// subscription in Publish, which puts its view on the stream's channel. When that channel is
// full the broker closes the subscription and the stream ends with RESUME_REQUIRED. The
// context's end closes the subscription.
func liveWorkspace[T any](ctx context.Context, b *Broker, ws string, view func(*Event) T) *Stream[T] {
	out := make(chan T, b.QueueSize())
	s := &Stream[T]{C: out, live: true}
	sub := b.SubscribeFunc(ws, func(ev *Event) bool {
		sent, wake := s.offer(out, view(ev), ev.Cursor)
		if wake != nil {
			wake()
		}
		return sent
	}, func(err error) {
		if err != nil {
			s.fail(lagError(err))
		}
		close(out)
		if wake := s.closedWake(); wake != nil {
			wake()
		}
	})
	context.AfterFunc(ctx, sub.Close)
	return s
}

// replayWorkspace sends every logged event of ws after cursor and returns the last cursor sent.
func replayWorkspace[T any](ctx context.Context, r Reader, ws string, cursor int64, out chan<- T, s *Stream[T], view func(*Event) T) (int64, error) {
	for {
		page, err := r.EventsAfter(ctx, ws, cursor, replayPage)
		if err != nil {
			return cursor, fmt.Errorf("replay events of %s after %d: %w", ws, cursor, err)
		}
		for i := range page {
			if !s.put(ctx, out, view(&page[i]), page[i].Cursor) {
				return cursor, ctx.Err()
			}
			cursor = page[i].Cursor
		}
		if len(page) < replayPage {
			return cursor, nil
		}
	}
}

// lagError is RESUME_REQUIRED for a subscriber the broker dropped.
func lagError(cause error) error {
	return &Error{Code: CodeResumeRequired, Reason: ErrorReason(cause), Retryable: true,
		Message: "the event stream fell behind", Err: cause}
}

// send delivers v unless the subscriber went away.
func send[T any](ctx context.Context, out chan<- T, v T) bool {
	select {
	case out <- v:
		return true
	case <-ctx.Done():
		return false
	}
}
