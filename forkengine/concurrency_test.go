package forkengine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// startTogether runs n StartFork calls released at the same moment and returns their answers.
func startTogether(h *harness, n int, requestID func(i int) string) ([]forkengine.ForkOperation, []error) {
	ops := make([]forkengine.ForkOperation, n)
	errs := make([]error, n)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			ops[i], errs[i] = h.fork(requestID(i), "turn-7")
		}()
	}
	close(release)
	wg.Wait()
	return ops, errs
}

func TestConcurrentStartsOfOneRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withBackground)
	h.seed(7)
	ops, errs := startTogether(h, 50, func(int) string { return "request-1" })
	for i := range ops {
		require.NoError(t, errs[i])
		require.Equal(t, ops[0].ID, ops[i].ID)
	}
	require.NoError(t, h.engine.Close(h.ctx))
	require.Equal(t, 1, h.operations())
	require.Equal(t, 1, h.driver.ForkCalls())
	require.Equal(t, forkengine.StatusCommitted, h.stored(ops[0].ID).Status)
}

func TestConcurrentStartsOnOneBoundary(t *testing.T) {
	t.Parallel()
	t.Run("BarrierOnSameOperation", func(t *testing.T) {
		h := newHarness(t, withBackground)
		h.seed(7)
		ops, errs := startTogether(h, 50, func(i int) string { return fmt.Sprintf("request-%d", i) })
		for i := range ops {
			require.NoError(t, errs[i])
			require.Equal(t, ops[0].ID, ops[i].ID)
		}
		require.NoError(t, h.engine.Close(h.ctx))
		require.Equal(t, 1, h.operations())
		require.Equal(t, 1, h.driver.ForkCalls())
	})
	t.Run("BarrierOffOneOperationOthersInProgress", func(t *testing.T) {
		h := newHarness(t, withBackground, withoutBarrier)
		h.seed(7)
		gate := make(chan struct{})
		h.driver.SetGate(gate) // the winner stays active until every start has answered
		ops, errs := startTogether(h, 50, func(i int) string { return fmt.Sprintf("request-%d", i) })
		close(gate)
		winners := map[string]bool{}
		for i := range ops {
			if errs[i] != nil {
				requireCode(t, errs[i], forkengine.CodeForkInProgress, "")
				continue
			}
			winners[ops[i].ID] = true
		}
		require.Len(t, winners, 1)
		require.NoError(t, h.engine.Close(h.ctx))
		require.Equal(t, 1, h.operations())
		require.Equal(t, 1, h.driver.ForkCalls())
	})
}

// Two workers racing to dispatch one prepared operation call the driver once.
func TestConcurrentProcessingDispatchesOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(7)
	op := h.mustFork("request-1", "turn-7")
	var wg sync.WaitGroup
	release := make(chan struct{})
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			_, errs[i] = h.engine.ProcessOperation(h.ctx, ws, op.ID)
		}()
	}
	close(release)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 1, h.driver.ForkCalls())
	require.Equal(t, forkengine.StatusCommitted, h.stored(op.ID).Status)
}

// A worker that loses the compare-and-swap to dispatching never calls the driver: it continues
// from the state the winner left.
func TestLostDispatchRaceDoesNotCallTheDriver(t *testing.T) {
	t.Parallel()
	holding := &holdingDriver{ScriptedDriver: forkenginetest.NewScriptedDriver(),
		held: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, func(cfg *forkengine.Config) { cfg.Drivers[provider] = holding })
	h.driver = holding.ScriptedDriver
	h.seed(7)
	op := h.mustFork("request-1", "turn-7")
	holding.armed.Store(true)

	type outcome struct {
		op  forkengine.ForkOperation
		err error
	}
	loser := make(chan outcome, 1)
	go func() {
		got, err := h.engine.ProcessOperation(h.ctx, ws, op.ID) // reads prepared, then is held in Describe
		loser <- outcome{got, err}
	}()
	<-holding.held
	winner := h.process(op)
	require.Equal(t, forkengine.StatusCommitted, winner.Status)
	close(holding.release)
	lost := <-loser
	require.NoError(t, lost.err)
	require.Equal(t, winner, lost.op)
	require.Equal(t, 1, h.driver.ForkCalls())
}

// holdingDriver holds the first Describe call after it is armed until release is closed.
type holdingDriver struct {
	*forkenginetest.ScriptedDriver
	armed   atomic.Bool
	held    chan struct{}
	release chan struct{}
}

func (d *holdingDriver) Describe(ctx context.Context, s forkengine.Session) (forkengine.Descriptor, error) {
	if d.armed.CompareAndSwap(true, false) {
		close(d.held)
		<-d.release
	}
	return d.ScriptedDriver.Describe(ctx, s)
}

// A start that lost a race its reads could not see (another writer's insert was not visible to
// it) hits a unique rule on insert; it runs again and answers as the later request.
func TestStartForkLostRaceRunsAgain(t *testing.T) {
	t.Parallel()
	for _, requestID := range []string{"request-1", "request-2"} {
		t.Run(requestID, func(t *testing.T) {
			blind := &blindStore{MemStore: forkengineMemStore()}
			h := newHarness(t, func(cfg *forkengine.Config) { cfg.Store = blind })
			h.store = blind.MemStore
			h.seed(7)
			first := h.mustFork("request-1", "turn-7")
			blind.blind.Store(true)
			second := h.mustFork(requestID, "turn-7")
			require.Equal(t, first.ID, second.ID)
			require.False(t, blind.blind.Load(), "the insert was tried and refused")
			require.Equal(t, 1, h.operations())
		})
	}
}

// blindStore hides existing operations from the replay, barrier and reservation reads until an insert fails
// on a unique rule, like a reader whose snapshot predates a concurrent commit.
type blindStore struct {
	*forkenginetest.MemStore
	blind atomic.Bool
}

func (s *blindStore) GetOperationByRequestID(ctx context.Context, ws, requestID string) (forkengine.ForkOperation, error) {
	return blindRead(s, func() (forkengine.ForkOperation, error) {
		return s.MemStore.GetOperationByRequestID(ctx, ws, requestID)
	})
}

func (s *blindStore) LatestOperationOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.ForkOperation, error) {
	return blindRead(s, func() (forkengine.ForkOperation, error) {
		return s.MemStore.LatestOperationOnBoundary(ctx, ws, sourceID, turnID)
	})
}

func (s *blindStore) LatestOperationStateOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.OperationState, error) {
	return blindRead(s, func() (forkengine.OperationState, error) {
		return s.MemStore.LatestOperationStateOnBoundary(ctx, ws, sourceID, turnID)
	})
}

func (s *blindStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	return s.MemStore.Update(ctx, func(tx forkengine.Tx) error { return fn(blindTx{tx, s}) })
}

type blindTx struct {
	forkengine.Tx
	store *blindStore
}

func (tx blindTx) GetOperationByRequestID(ctx context.Context, ws, requestID string) (forkengine.ForkOperation, error) {
	return blindRead(tx.store, func() (forkengine.ForkOperation, error) { return tx.Tx.GetOperationByRequestID(ctx, ws, requestID) })
}

func (tx blindTx) LatestOperationOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.ForkOperation, error) {
	return blindRead(tx.store, func() (forkengine.ForkOperation, error) {
		return tx.Tx.LatestOperationOnBoundary(ctx, ws, sourceID, turnID)
	})
}

func (tx blindTx) LatestOperationStateOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.OperationState, error) {
	return blindRead(tx.store, func() (forkengine.OperationState, error) {
		return tx.Tx.LatestOperationStateOnBoundary(ctx, ws, sourceID, turnID)
	})
}

func (tx blindTx) OperationReservingTarget(ctx context.Context, ws, targetID string) (forkengine.ForkOperation, error) {
	return blindRead(tx.store, func() (forkengine.ForkOperation, error) { return tx.Tx.OperationReservingTarget(ctx, ws, targetID) })
}

func (tx blindTx) InsertOperation(ctx context.Context, op forkengine.ForkOperation) error {
	err := tx.Tx.InsertOperation(ctx, op)
	if errors.Is(err, forkengine.ErrDuplicate) {
		tx.store.blind.Store(false)
	}
	return err
}

func blindRead[T any](s *blindStore, read func() (T, error)) (T, error) {
	if s.blind.Load() {
		var zero T
		return zero, fmt.Errorf("hidden: %w", forkengine.ErrNotFound)
	}
	return read()
}
