package forkengine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// testCheckpoint is the checkpoint try of these tests: short, so a stalled try ends quickly.
const testCheckpoint = 100 * time.Millisecond

// stallingStore makes its next n transactions wait until their context ends and fail with its
// error, as a database whose connection pool or lock queue does not move under load would.
type stallingStore struct {
	forkengine.Store
	mu     sync.Mutex
	stalls int
	seen   int // transactions stalled so far
}

func (s *stallingStore) stall(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalls = n
}

func (s *stallingStore) stalled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

func (s *stallingStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	s.mu.Lock()
	stall := s.stalls > 0
	if stall {
		s.stalls--
		s.seen++
	}
	s.mu.Unlock()
	if stall {
		<-ctx.Done()
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	return s.Store.Update(ctx, fn)
}

// answeringDriver answers Reconcile with answer(req) after before() ran (both set by the test),
// in place of the scripted queue.
type answeringDriver struct {
	*forkenginetest.ScriptedDriver
	before func(req forkengine.ReconcileRequest)
	answer func(req forkengine.ReconcileRequest) forkengine.ReconcileResult
}

func (d *answeringDriver) Reconcile(ctx context.Context, req forkengine.ReconcileRequest) (forkengine.ReconcileResult, error) {
	_, _ = d.ScriptedDriver.Reconcile(ctx, req) // counted and kept like any call
	if d.before != nil {
		d.before(req)
	}
	return d.answer(req), nil
}

// newCheckpointHarness is a harness whose engine writes through a stallingStore, with short
// checkpoint tries and an answeringDriver that finds every child.
func newCheckpointHarness(t *testing.T) (*harness, *stallingStore, *answeringDriver) {
	var st *stallingStore
	var d *answeringDriver
	h := newHarness(t, func(c *forkengine.Config) {
		st = &stallingStore{Store: c.Store}
		d = &answeringDriver{ScriptedDriver: c.Drivers[provider].(*forkenginetest.ScriptedDriver),
			answer: forkenginetest.FoundResult}
		c.Store, c.Drivers = st, map[string]forkengine.Driver{provider: d}
		forkengine.SetCheckpointTimeout(c, testCheckpoint)
	})
	return h, st, d
}

// A provider's answer is recorded on deadlines of its own, taken once the answer is in: a
// provider that took longer than a checkpoint try to answer does not leave the write no time.
// Under load on PostgreSQL the reconcile answers' writes shared a deadline with the call before
// them, ran out of it, and the same found child was asked for again and again, never recorded.
func TestASlowProvidersAnswerIsStillRecorded(t *testing.T) {
	t.Parallel()
	h, _, d := newCheckpointHarness(t)
	h.seed(1)
	op := h.unknownFork("request-1")
	d.before = func(forkengine.ReconcileRequest) { time.Sleep(3 * testCheckpoint) } // a slow provider, not a wait
	got, err := h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, got.Status)
	require.Equal(t, forkengine.StatusCommitted, h.stored(op.ID).Status)
	require.Equal(t, 1, h.driver.ReconcileCalls())
}

// A try of the write that records an answer may run out of time (the database is busy); it is
// made again, with a fresh deadline, so the answer the provider gave is recorded and the provider
// is not asked again. Table: every kind of answer, on the fork path and the reconcile path.
func TestAnAnswerIsRecordedWhenATryRunsOutOfTime(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		stalls   int
		answer   func(forkengine.ReconcileRequest) forkengine.ReconcileResult // nil: the fork path
		status   forkengine.OperationStatus
		attempts int
	}{
		{name: "ForkAccepted", stalls: 3, status: forkengine.StatusCommitted},
		{name: "ReconcileFound", stalls: 3, answer: forkenginetest.FoundResult, status: forkengine.StatusCommitted, attempts: 1},
		{name: "ReconcileAbsent", stalls: 2, answer: func(forkengine.ReconcileRequest) forkengine.ReconcileResult {
			return forkengine.ReconcileResult{Answer: forkengine.ReconcileAbsent}
		}, status: forkengine.StatusFailed, attempts: 1},
		{name: "ReconcileUnknown", stalls: 2, answer: func(forkengine.ReconcileRequest) forkengine.ReconcileResult {
			return forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown, Error: "not yet"}
		}, status: forkengine.StatusUnknown, attempts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, st, d := newCheckpointHarness(t)
			h.seed(1)
			var got forkengine.ForkOperation
			if tc.answer == nil {
				h.driver.QueueFork(forkenginetest.ForkStep{Func: func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
					st.stall(tc.stalls) // the combined commit, then two tries of the acceptance alone
					return forkenginetest.AcceptedResult(req), nil
				}})
				got = h.process(h.mustFork("request-1", "turn-1"))
			} else {
				op := h.unknownFork("request-1")
				d.answer = tc.answer
				d.before = func(forkengine.ReconcileRequest) { st.stall(tc.stalls) }
				var err error
				got, err = h.engine.ReconcileForkOperation(h.ctx, ws, op.ID)
				require.NoError(t, err)
			}
			require.Equal(t, tc.stalls, st.stalled(), "every stalled try was made")
			stored := h.stored(got.ID)
			require.Equal(t, tc.status, got.Status)
			require.Equal(t, tc.status, stored.Status)
			require.Equal(t, tc.attempts, stored.ReconcileAttempts)
			require.Equal(t, 1, h.driver.ForkCalls())
			if tc.answer != nil {
				require.Equal(t, 1, h.driver.ReconcileCalls(), "asked once: the answer was kept")
			}
		})
	}
}
