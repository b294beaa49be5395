// Package await is the repository's one bounded wait for a condition a test cannot be told of by
// an event: a metric, a state read over HTTP, a count another goroutine moves. It polls, starting
// a millisecond apart and backing off to a tenth of a second, so a short wait ends as soon as the
// condition holds and a long one does not load what it watches; it fails at the limit, saying
// what did not happen, instead of sleeping for a guessed time.
//
// A fixed time.Sleep in a test is kept only where the wait is the point (a slow peer's pace, a
// deadline that must pass) and says so in a comment.
package await

import (
	"context"
	"fmt"
	"testing"
	"time"
)

const (
	firstInterval = time.Millisecond
	maxInterval   = 100 * time.Millisecond
)

// Until polls ok until it holds, failing t with what after limit.
func Until(t testing.TB, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	State(t, limit, what, func() (bool, string) { return ok(), "" })
}

// State is Until for a check that also describes what it saw; the failure prints the last
// description, so a timeout says where the wait stopped.
func State(t testing.TB, limit time.Duration, what string, check func() (bool, string)) {
	t.Helper()
	var last string
	err := Poll(context.Background(), limit, func() (bool, error) {
		var done bool
		done, last = check()
		return done, nil
	})
	if err == nil {
		return
	}
	if last != "" {
		t.Fatalf("%s: not within %s; last: %s", what, limit, last)
	}
	t.Fatalf("%s: not within %s", what, limit)
}

// Poll is the wait for code without a testing.TB (the process harness, the benches): it polls
// check until it reports done, returns check's error at once, and returns an error after limit or
// when ctx ends.
func Poll(ctx context.Context, limit time.Duration, check func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	interval := firstInterval
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval): // the poll's pace, not a guess at how long the condition takes
		}
		interval = min(interval*3/2+time.Millisecond/2, maxInterval)
	}
}
