package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// checkpointTries bounds how often a write that records a provider's answer is tried when each
// try runs out of time: with checkpointTimeout each, about a minute in all.
const checkpointTries = 6

// checkpoint runs write, which records what a provider answered (or commits what it accepted),
// on a context the caller cannot cancel: the provider has acted, and a request that hangs up or a
// sweep that ends must not lose that. Each try has a deadline of its own, taken when the try
// starts, so neither the provider call before it nor an earlier write of the same answer can have
// spent it. A try that ran out of time (under load: a connection pool or lock queue that did not
// move within checkpointTimeout) is made again, up to checkpointTries times; any other error ends
// it at once, since the database refused the write itself. write must be safe to run again:
// every engine write is a compare-and-swap on the operation, so a try that committed although its
// context ended turns the next one into a read.
func (e *Engine) checkpoint(ctx context.Context, write func(ctx context.Context) error) error {
	detached := context.WithoutCancel(ctx)
	var err error
	for try := 1; try <= checkpointTries; try++ {
		if err = e.checkpointOnce(detached, write); !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		e.log.Warn("recording a provider's answer ran out of time; trying again", "try", try, "error", err)
	}
	return fmt.Errorf("record a provider's answer: every one of %d tries ran out of time: %w", checkpointTries, err)
}

// checkpointOnce runs write once under a fresh checkpoint deadline. A write that failed because
// that deadline passed reports context.DeadlineExceeded, whatever its driver made of the ended
// context.
func (e *Engine) checkpointOnce(ctx context.Context, write func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.checkpointTimeout)
	defer cancel()
	err := write(ctx)
	if err != nil && ctx.Err() != nil && !errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (%w)", err, context.DeadlineExceeded)
	}
	return err
}
