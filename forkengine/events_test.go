package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// drain returns every event already queued on sub.
func drain(sub *forkengine.Subscription) []forkengine.Event {
	var events []forkengine.Event
	for {
		select {
		case ev := <-sub.C():
			events = append(events, ev)
		default:
			return events
		}
	}
}

// The durable log and the published stream carry the same events, in the same order, and a
// commit logs the target session (not each copied turn) and the operation's move.
func TestForkEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	start := h.eventCount()
	sub := h.broker.Subscribe(ws)
	defer sub.Close()
	op := h.forkAndProcess("request-1", "turn-2")

	logged, err := h.store.EventsAfter(h.ctx, ws, int64(start), 1000)
	require.NoError(t, err)
	require.Equal(t, logged, drain(sub), "published after commit, exactly what was logged")

	type entry struct {
		kind   forkengine.EventKind
		status forkengine.OperationStatus
	}
	var got []entry
	for _, ev := range logged {
		got = append(got, entry{ev.Kind, ev.Status})
		if ev.Kind == forkengine.EventForkOperationUpdated {
			require.Equal(t, op.ID, ev.OperationID)
		}
	}
	require.Equal(t, []entry{
		{forkengine.EventForkOperationUpdated, forkengine.StatusPrepared},
		{forkengine.EventForkOperationUpdated, forkengine.StatusDispatching},
		{forkengine.EventForkOperationUpdated, forkengine.StatusProviderAccepted},
		{forkengine.EventSessionUpserted, ""}, // the new target, turns included: no event per copied turn
		{forkengine.EventForkOperationUpdated, forkengine.StatusCommitted},
	}, got)
	require.Equal(t, op.TargetSessionID, logged[3].SessionID)
}

// A transaction that rolls back logs and publishes nothing.
func TestNoEventsFromARolledBackCommit(t *testing.T) {
	t.Parallel()
	flaky := &flakyStore{MemStore: forkengineMemStore()}
	h := newHarness(t, func(cfg *forkengine.Config) { cfg.Store = flaky })
	h.store = flaky.MemStore
	h.seed(2)
	op := h.mustFork("request-1", "turn-2")
	sub := h.broker.Subscribe(ws)
	defer sub.Close()
	flaky.failLineageWrites.Store(2) // the commit beside the acceptance and its retry
	_, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
	require.ErrorIs(t, err, errDiskFull)
	for _, ev := range drain(sub) {
		require.Equal(t, forkengine.EventForkOperationUpdated, ev.Kind)
		require.NotEqual(t, forkengine.StatusCommitted, ev.Status)
	}
	_, err = h.store.GetSession(h.ctx, ws, op.TargetSessionID)
	require.ErrorIs(t, err, forkengine.ErrNotFound)
}

// Deleting publishes SESSION_DELETED; purge too.
func TestDeleteEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(1)
	h.session("other", "provider-other", "other")
	sub := h.broker.Subscribe(ws)
	defer sub.Close()
	require.NoError(t, h.engine.DeleteSession(h.ctx, ws, source, false))
	require.NoError(t, h.engine.DeleteSession(h.ctx, ws, "other", true))
	events := drain(sub)
	require.Len(t, events, 2)
	for i, id := range []string{source, "other"} {
		require.Equal(t, forkengine.EventSessionDeleted, events[i].Kind)
		require.Equal(t, id, events[i].SessionID)
	}
}
