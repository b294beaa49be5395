package multiinstance

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Follower reads a workspace's events across subscriptions the way a careful client does: it
// remembers the last cursor, resumes after it when the server ends the stream with
// RESUME_REQUIRED, and can be moved to another instance (Follow again with another URL).
type Follower struct {
	Workspace string
	Events    []Event // everything received, in order, across every subscription
	Resumes   int     // subscriptions started after the first
	After     string  // the cursor to resume after: the start cursor, then the last one received
}

// maxResumes bounds how often one Follow resubscribes after RESUME_REQUIRED.
const maxResumes = 50

// Follow subscribes on wsURL after f.After and reads until stop matches an event (true), at most
// limit events in all and each within idle. It returns an error wrapping ErrStreamEnded when the
// connection was lost (the instance died): call Follow again, on another instance.
func (f *Follower) Follow(ctx context.Context, wsURL string, limit int, idle time.Duration, stop func(Event) bool) error {
	for resumes := 0; ; resumes++ {
		if f.started() {
			f.Resumes++
		}
		s, err := SubscribeEvents(ctx, wsURL, f.Workspace, f.After)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrStreamEnded, err)
		}
		done, err := f.read(ctx, s, limit, idle, stop)
		s.Close()
		if done || err == nil {
			return err
		}
		var re *ResponseError
		if !errors.As(err, &re) || re.Errors[0].Code() != "RESUME_REQUIRED" || resumes >= maxResumes {
			return err
		}
	}
}

func (f *Follower) started() bool { return len(f.Events) > 0 || f.Resumes > 0 }

// read returns done=true when stop matched or limit was reached (err says which).
func (f *Follower) read(ctx context.Context, s *Stream, limit int, idle time.Duration, stop func(Event) bool) (bool, error) {
	for len(f.Events) < limit {
		ev, err := s.NextEvent(ctx, idle)
		if err != nil {
			return false, fmt.Errorf("after %d events: %w", len(f.Events), err)
		}
		f.Events = append(f.Events, ev)
		f.After = ev.Cursor
		if stop(ev) {
			return true, nil
		}
	}
	return true, fmt.Errorf("read %d events without the last one", limit)
}
