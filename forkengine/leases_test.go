package forkengine_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// peer is a second engine (another instance) on the harness's store, with the same clock and
// driver, named instance-b.
func (h *harness) peer(options ...func(*forkengine.Config)) *forkengine.Engine {
	h.t.Helper()
	cfg := forkengine.Config{Store: h.store, Drivers: map[string]forkengine.Driver{provider: h.driver},
		Clock: h.clock, NewID: h.id, Logger: slog.New(slog.DiscardHandler), NoBackground: true, InstanceID: "instance-b"}
	for _, o := range options {
		o(&cfg)
	}
	e, err := forkengine.New(cfg)
	require.NoError(h.t, err)
	h.t.Cleanup(func() { require.NoError(h.t, e.Close(context.Background())) })
	return e
}

// forkInFlight starts a fork whose driver call is out until gate is closed, and returns once the
// driver has it.
func (h *harness) forkInFlight() (forkengine.ForkOperation, chan struct{}) {
	h.t.Helper()
	h.seed(1)
	gate := make(chan struct{})
	h.driver.SetGate(gate)
	h.driver.QueueFork()
	op := h.mustFork("request-1", "turn-1")
	select {
	case <-h.driver.ForkEntered():
	case <-time.After(10 * time.Second):
		h.t.Fatal("the fork was never dispatched")
	}
	return op, gate
}

// advance moves the harness clock.
func (h *harness) advance(d time.Duration) {
	h.mu.Lock()
	h.now = h.now.Add(d)
	h.mu.Unlock()
}

// A live lease belongs to its instance: a peer starting up, reading or processing leaves the
// operation alone and calls no provider.
func TestPeersLeaveALiveLeaseAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	prepared := h.mustFork("request-prepared", "turn-1")
	dispatching := putOperation(t, h, h.mustFork("request-dispatching", "turn-2"), forkengine.StatusDispatching)
	require.Equal(t, h.engine.InstanceID(), prepared.LeaseOwner, "the starting instance holds the fork")
	b := h.peer()

	report, err := b.Recover(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{}, report)
	report, err = b.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{}, report)
	got, err := b.ProcessOperation(h.ctx, ws, prepared.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusPrepared, got.Status)
	require.Equal(t, forkengine.StatusDispatching, h.stored(dispatching.ID).Status, "not mistaken for a leftover")
	require.Equal(t, 0, h.driver.ForkCalls())
}

// After the lease expires (its instance died), a peer takes every phase over by the start-up
// rules: dispatching → unknown with no provider call, prepared → dispatched once,
// provider_accepted → committed with no provider call.
func TestTakeOverAfterTheLeaseExpires(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(3)
	prepared := h.mustFork("request-prepared", "turn-1")
	dispatching := putOperation(t, h, h.mustFork("request-dispatching", "turn-2"), forkengine.StatusDispatching)
	accepted := h.mustFork("request-accepted", "turn-3")
	accepted.TargetProviderSessionID, accepted.StateBindingMode = "child-accepted", forkengine.BindingHostCopy
	accepted = putOperation(t, h, accepted, forkengine.StatusProviderAccepted)
	h.driver.QueueFork()
	b := h.peer()

	h.advance(forkengine.DefaultLeaseDuration + time.Second)
	report, err := b.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{Scanned: 3, Unknown: 1, Resumed: 2}, report)
	require.NoError(t, b.Close(h.ctx)) // waits for the background work
	require.Equal(t, forkengine.StatusUnknown, h.stored(dispatching.ID).Status)
	require.Equal(t, forkengine.StatusCommitted, h.stored(prepared.ID).Status)
	require.Equal(t, forkengine.StatusCommitted, h.stored(accepted.ID).Status)
	require.Equal(t, 1, h.driver.ForkCalls(), "only the prepared one reached the provider")
	for _, id := range []string{prepared.ID, dispatching.ID, accepted.ID} {
		require.Equal(t, "instance-b", h.stored(id).LeaseOwner)
	}

	// The dead instance's engine, had it survived, can no longer move what it lost.
	got, err := h.engine.ProcessOperation(h.ctx, ws, prepared.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, got.Status)
	require.Equal(t, 1, h.driver.ForkCalls())
}

// An instance that stalled past its lease while its driver call was out loses the operation to
// the taker, which marks it unknown; the late answer then changes nothing and nothing is sent
// twice.
func TestALateAnswerAfterATakeoverChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBackground)
	op, gate := h.forkInFlight()
	b := h.peer()
	h.advance(forkengine.DefaultLeaseDuration + time.Second) // and no renewal came
	report, err := b.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{Scanned: 1, Unknown: 1}, report)
	close(gate)
	require.NoError(t, h.engine.Close(h.ctx))
	require.Equal(t, forkengine.StatusUnknown, h.stored(op.ID).Status, "the taker's verdict stands")
	require.Equal(t, 1, h.driver.ForkCalls())
}

// While an instance works on a fork it renews the lease, so a peer never takes it over; and its
// own sweep re-leases, without touching, a fork it is still driving whose renewal came late.
func TestRenewedLeasesAreNotTakenOver(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBackground)
	op, gate := h.forkInFlight()
	require.Equal(t, 1, h.engine.HeldLeases())
	b := h.peer()
	h.advance(forkengine.DefaultLeaseDuration - time.Second)
	require.NoError(t, h.engine.RenewLeases(h.ctx))
	h.advance(2 * time.Second) // past the first expiry, not the renewed one
	report, err := b.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{}, report)

	h.advance(forkengine.DefaultLeaseDuration) // the renewal is late now
	report, err = h.engine.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{}, report, "its own work in flight is re-leased, not settled")
	close(gate)
	require.NoError(t, h.engine.Close(h.ctx))
	require.Equal(t, forkengine.StatusCommitted, h.stored(op.ID).Status)
	require.Zero(t, h.engine.HeldLeases())
}

// A fork whose own background work never ran (or failed in passing) is driven by its instance's
// sweep once its lease expires, without a restart.
func TestOwnStalledForkIsTakenOverByTheSweep(t *testing.T) {
	t.Parallel()
	h := newHarness(t) // no background work: the fork stays prepared
	h.seed(1)
	op := h.mustFork("request-1", "turn-1")
	h.driver.QueueFork()
	report, err := h.engine.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{}, report, "its lease is live")
	h.advance(forkengine.DefaultLeaseDuration + time.Second)
	report, err = h.engine.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{Scanned: 1, Resumed: 1}, report)
	require.NoError(t, h.engine.Close(h.ctx))
	require.Equal(t, forkengine.StatusCommitted, h.stored(op.ID).Status)
}

// On a store only this process can open, start-up recovery takes over every unfinished fork at
// once, whatever its lease says: every lease there belongs to a dead process.
func TestExclusiveStoreRecoversEveryLeaseAtStartUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	op := putOperation(t, h, h.mustFork("request-1", "turn-1"), forkengine.StatusDispatching)
	shared := h.peer()
	report, err := shared.Recover(h.ctx)
	require.NoError(t, err)
	require.Zero(t, report.Scanned, "a shared store waits for the lease")
	exclusive := h.peer(func(c *forkengine.Config) { c.ExclusiveStore = true; c.InstanceID = "instance-c" })
	report, err = exclusive.Recover(h.ctx)
	require.NoError(t, err)
	require.Equal(t, forkengine.RecoveryReport{Scanned: 1, Unknown: 1}, report)
	require.Equal(t, forkengine.StatusUnknown, h.stored(op.ID).Status)
}

// On SQLite each restart may have a new instance id, and a process killed within seconds of its
// start leaves live leases on the unknown operations its start-up settled, not yet due. The next
// process must not wait those leases out: its sweep takes them as soon as the attempt is due, and
// an attempt a person asks for takes them at once. A shared store still waits for the lease.
func TestExclusiveStoreSweepTakesADeadProcessesReconcileLeases(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	swept := h.unknownForkThrough("request-1", "turn-1") // leased to h.engine, the process that dies
	asked := h.unknownForkThrough("request-2", "turn-2")
	require.True(t, h.stored(swept.ID).LeaseExpiresAt.After(h.now.Add(10*time.Second)), "the dead process's lease is live")

	next := h.peer(func(c *forkengine.Config) { c.ExclusiveStore = true; c.InstanceID = "instance-c" })
	report, err := next.StartRecovery(h.ctx)
	require.NoError(t, err)
	require.Zero(t, report.Scanned, "neither is due at start-up")

	// The one a person asks for is not due for a while; the other is (3 s in), while the dead
	// process's lease on it still has about 12 s.
	putLease(t, h, asked.ID, h.engine.InstanceID(), h.now.Add(time.Minute), h.now.Add(time.Hour))
	h.advance(3 * time.Second)
	h.driver.QueueReconcile(forkenginetest.ReconcileStep{Result: forkenginetest.FoundResult(
		forkengine.ReconcileRequest{ForkRequest: h.driver.ForkRequests()[0]})})
	report, err = h.peer().TakeOver(h.ctx)
	require.NoError(t, err)
	require.Zero(t, report.Scanned, "a shared store waits for the lease")

	report, err = next.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, report.Scanned, "the exclusive store's sweep takes the dead lease once due")
	require.NoError(t, next.Close(h.ctx))
	got := h.stored(swept.ID)
	require.Equal(t, forkengine.StatusCommitted, got.Status)
	require.Equal(t, "instance-c", got.LeaseOwner)
	require.Equal(t, 1, got.ReconcileAttempts)

	// Not due, leased to the dead process: a person's attempt takes it anyway.
	onDemand := h.peer(func(c *forkengine.Config) { c.ExclusiveStore = true; c.InstanceID = "instance-d" })
	before := h.driver.ReconcileCalls()
	op, err := onDemand.ReconcileForkOperation(h.ctx, ws, asked.ID)
	require.NoError(t, err)
	require.Equal(t, before+1, h.driver.ReconcileCalls(), "asked at once, not after the dead lease")
	require.Equal(t, "instance-d", op.LeaseOwner)
}

// putLease rewrites an operation's lease and next reconcile attempt in the store.
func putLease(t *testing.T, h *harness, id, owner string, until, next time.Time) {
	t.Helper()
	require.NoError(t, h.store.Update(h.ctx, func(tx forkengine.Tx) error {
		op, err := tx.GetOperation(h.ctx, ws, id)
		if err != nil {
			return err
		}
		op.LeaseOwner, op.LeaseExpiresAt, op.NextReconcileAt = owner, &until, &next
		_, err = tx.UpdateOperation(h.ctx, op, op.Status)
		return err
	}))
}

// hookedDriver runs onDescribe (once armed) inside Describe: a point between ProcessOperation's
// read of the operation and its prepared -> dispatching compare-and-swap.
type hookedDriver struct {
	*forkenginetest.ScriptedDriver
	mu         sync.Mutex
	onDescribe func()
}

// newHookedHarness is a harness whose driver is a hookedDriver around its scripted one.
func newHookedHarness(t *testing.T) (*harness, *hookedDriver) {
	var hd *hookedDriver
	h := newHarness(t, func(c *forkengine.Config) {
		hd = &hookedDriver{ScriptedDriver: c.Drivers[provider].(*forkenginetest.ScriptedDriver)}
		c.Drivers = map[string]forkengine.Driver{provider: hd}
	})
	return h, hd
}

func (d *hookedDriver) Describe(ctx context.Context, s forkengine.Session) (forkengine.Descriptor, error) {
	d.mu.Lock()
	hook := d.onDescribe
	d.onDescribe = nil
	d.mu.Unlock()
	if hook != nil {
		hook()
	}
	return d.ScriptedDriver.Describe(ctx, s)
}

// An instance whose lease is taken over between its read of a prepared operation and its
// compare-and-swap must stop: the operation now belongs to the taker (SPEC: "A live lease is never
// touched by another instance"). The lost swap returns the stored row, which carries the taker's
// owner; retrying from it, the swap succeeded and the old instance dispatched the taker's fork.
func TestAnInstanceThatLostItsLeaseBeforeDispatchStops(t *testing.T) {
	t.Parallel()
	h, hd := newHookedHarness(t)
	h.seed(1)
	op := h.mustFork("request-1", "turn-1") // prepared, leased to instance A (h.engine)
	h.advance(forkengine.DefaultLeaseDuration + time.Second)

	// Instance B claims the expired lease while A is re-verifying (its TakeOver's claim step).
	hd.onDescribe = func() {
		now := h.clock()
		claimed, err := h.store.ClaimOperations(h.ctx, forkengine.LeaseClaim{
			Owner: "instance-b", Now: now, Until: now.Add(forkengine.DefaultLeaseDuration), Limit: 10})
		require.NoError(t, err)
		require.Len(t, claimed, 1)
	}
	got, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
	require.NoError(t, err)

	stored := h.stored(op.ID)
	require.Equal(t, "instance-b", stored.LeaseOwner)
	require.Equal(t, 0, h.driver.ForkCalls(), "A lost the lease; only B may call the provider")
	require.Equal(t, forkengine.StatusPrepared, stored.Status, "B's operation was moved by A (got %s)", got.Status)
}

// Stopping leaves nothing undone: the taker finishes the fork, with the one provider call.
func TestATakeoverBeforeDispatchLeavesTheForkToTheTaker(t *testing.T) {
	t.Parallel()
	h, hd := newHookedHarness(t)
	h.seed(1)
	op := h.mustFork("request-1", "turn-1")
	b := h.peer()
	h.advance(forkengine.DefaultLeaseDuration + time.Second)
	hd.onDescribe = func() {
		_, err := b.TakeOver(h.ctx) // claims the expired lease; drives it once A's read is done
		require.NoError(t, err)
	}
	_, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return h.stored(op.ID).Status == forkengine.StatusCommitted },
		5*time.Second, 5*time.Millisecond, "the taker commits the fork")
	require.Equal(t, 1, h.driver.ForkCalls())
	require.Equal(t, "instance-b", h.stored(op.ID).LeaseOwner)
}
