package forkengine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

type detachKey struct{}

// DetachContext makes the background work's context, and its end function runs when that work
// is done: the hook tracing uses to give a fork's dispatch a trace linked to the request.
func TestBackgroundWorkRunsInTheDetachedContext(t *testing.T) {
	t.Parallel()
	var made, ended atomic.Int32
	var sawValue atomic.Bool
	h := newHarness(t, withBackground, func(cfg *forkengine.Config) {
		cfg.DetachContext = func(ctx context.Context) (context.Context, func()) {
			made.Add(1)
			return context.WithValue(context.WithoutCancel(ctx), detachKey{}, "detached"), func() { ended.Add(1) }
		}
		cfg.Drivers[provider] = valueCheckingDriver{Driver: cfg.Drivers[provider], saw: &sawValue}
	})
	h.seed(2)
	op := h.mustFork("request-1", "turn-2")
	require.NoError(t, h.engine.Close(h.ctx)) // waits for the background work

	require.Equal(t, forkengine.StatusCommitted, h.stored(op.ID).Status)
	require.Equal(t, int32(1), made.Load())
	require.Equal(t, int32(1), ended.Load(), "end runs once the work is done")
	require.True(t, sawValue.Load(), "the driver's Fork ran in the detached context")
}

// valueCheckingDriver records whether Fork's context carries the detached value.
type valueCheckingDriver struct {
	forkengine.Driver
	saw *atomic.Bool
}

func (d valueCheckingDriver) Fork(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
	if ctx.Value(detachKey{}) == "detached" {
		d.saw.Store(true)
	}
	return d.Driver.Fork(ctx, req)
}
