package forkengine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// stepTicker is MaintainLeases' ticker driven by the test: it learns the period asked for, and
// ticks only when the test says the harness clock has passed another one.
type stepTicker struct {
	periods chan time.Duration
	ticks   chan time.Time
}

func newStepTicker() *stepTicker {
	return &stepTicker{periods: make(chan time.Duration, 1), ticks: make(chan time.Time)}
}

func (s *stepTicker) newTicker(period time.Duration) (<-chan time.Time, func()) {
	s.periods <- period
	return s.ticks, func() {}
}

// sweepSignal reports each ClaimOperations of one owner once it has returned: the last store
// call of a MaintainLeases round, so the test knows the round's renewal and takeover are done.
type sweepSignal struct {
	forkengine.Store
	owner string
	done  chan struct{}
}

func (s *sweepSignal) ClaimOperations(ctx context.Context, c forkengine.LeaseClaim) ([]forkengine.ForkOperation, error) {
	ops, err := s.Store.ClaimOperations(ctx, c)
	if c.Owner == s.owner {
		s.done <- struct{}{}
	}
	return ops, err
}

// MaintainLeases, run against the clock, keeps a lease alive for as long as its holder drives
// the fork: a peer sweeping at any moment (here every second of the harness clock, for three
// leases) never finds it expired. Renewing once a lease instead of every third of it would let
// the lease lapse at each period's end, and the peer would take a fork that is still in flight.
func TestMaintainedLeasesOutliveEveryPeerSweep(t *testing.T) {
	t.Parallel()
	ticker := newStepTicker()
	var signal *sweepSignal
	h := newHarness(t, withBackground, func(c *forkengine.Config) {
		c.InstanceID = "instance-a"
		signal = &sweepSignal{Store: c.Store, owner: c.InstanceID, done: make(chan struct{}, 1)}
		c.Store = signal
		forkengine.SetTicker(c, ticker.newTicker)
	})
	op, gate := h.forkInFlight()
	ctx, stop := context.WithCancel(h.ctx)
	maintained := make(chan struct{})
	go func() { defer close(maintained); h.engine.MaintainLeases(ctx) }()
	var once sync.Once
	finish := func() { // also on failure, so the engine's Close in the harness cleanup returns
		once.Do(func() {
			stop()
			<-maintained
			close(gate)
		})
	}
	t.Cleanup(finish)
	var period time.Duration
	select {
	case period = <-ticker.periods:
	case <-time.After(10 * time.Second):
		t.Fatal("MaintainLeases asked for no ticker")
	}
	require.Positive(t, period)

	peer := h.peer()
	lastTick := h.now
	for elapsed := time.Second; elapsed <= 3*forkengine.DefaultLeaseDuration; elapsed += time.Second {
		h.advance(time.Second)
		report, err := peer.TakeOver(h.ctx)
		require.NoError(t, err)
		require.Zero(t, report.Scanned, "%s after the fork started, with renewals every %s, a peer took its lease", elapsed, period)
		if h.now.Sub(lastTick) < period {
			continue
		}
		lastTick = h.now
		select {
		case ticker.ticks <- h.now:
		case <-time.After(10 * time.Second):
			t.Fatalf("MaintainLeases took no tick %s in", elapsed)
		}
		select {
		case <-signal.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("the round ticked %s in did not finish", elapsed)
		}
	}
	finish()
	require.NoError(t, h.engine.Close(h.ctx))
	got := h.stored(op.ID)
	require.Equal(t, forkengine.StatusCommitted, got.Status)
	require.Equal(t, "instance-a", got.LeaseOwner)
	require.Equal(t, 1, h.driver.ForkCalls())
}
