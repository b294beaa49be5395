package forkengine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The work a takeover hands on runs side by side: one operation whose provider is slow to answer
// does not hold back the reconcile attempts claimed beside it, which would then be late by however
// long that call takes (up to DispatchTimeout).
func TestOneSlowReconcileDoesNotHoldBackTheOthers(t *testing.T) {
	t.Parallel()
	h, _, d := newCheckpointHarness(t)
	h.seed(2)
	slow, quick := h.unknownForkThrough("request-1", "turn-1"), h.unknownForkThrough("request-2", "turn-2")
	gate := make(chan struct{})
	d.before = func(req forkengine.ReconcileRequest) {
		if req.OperationID == slow.ID {
			<-gate
		}
	}
	t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	})
	h.advance(3 * time.Second)
	report, err := h.engine.TakeOver(h.ctx)
	require.NoError(t, err)
	require.Equal(t, 2, report.Resumed)
	require.Eventually(t, func() bool { return h.stored(quick.ID).Status == forkengine.StatusCommitted },
		10*time.Second, 5*time.Millisecond, "the quick one is reconciled while the slow call is out")
	require.Equal(t, forkengine.StatusUnknown, h.stored(slow.ID).Status)
	close(gate)
	require.NoError(t, h.engine.Close(h.ctx))
	require.Equal(t, forkengine.StatusCommitted, h.stored(slow.ID).Status)
}
