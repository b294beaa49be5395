package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Who did it: the operation records the subject that requested it and the one whose
// acknowledgement came first; replays, barrier answers and later acknowledgements by others
// change neither.
func TestRequestedAndAcknowledgedBy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(7)
	in := forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: source, ThroughTurnID: "turn-7", RequestID: "request-1",
		RequestedBy: "alice"}
	op, err := h.engine.StartFork(h.ctx, in)
	require.NoError(t, err)
	require.Equal(t, "alice", op.RequestedBy)
	op = h.process(op)
	require.Equal(t, forkengine.StatusCommitted, op.Status)
	require.Equal(t, "alice", h.stored(op.ID).RequestedBy, "kept through dispatch and commit")
	calls := h.driver.ForkRequests()
	require.Len(t, calls, 1)
	require.Equal(t, "alice", calls[0].RequestedBy, "the driver is told who asked")

	in.RequestedBy = "bob"
	replay, err := h.engine.StartFork(h.ctx, in)
	require.NoError(t, err)
	require.Equal(t, op.ID, replay.ID)
	require.Equal(t, "alice", replay.RequestedBy, "the requester is not part of the request's identity")
	in.RequestID = "request-2"
	barrier, err := h.engine.StartFork(h.ctx, in)
	require.NoError(t, err)
	require.Equal(t, op.ID, barrier.ID)
	require.Equal(t, "alice", barrier.RequestedBy)

	acked, err := h.engine.Acknowledge(h.ctx, ws, op.ID, "bob")
	require.NoError(t, err)
	require.Equal(t, "bob", acked.AcknowledgedBy)
	again, err := h.engine.Acknowledge(h.ctx, ws, op.ID, "carol")
	require.NoError(t, err)
	require.Equal(t, "bob", again.AcknowledgedBy, "the first acknowledgement is the one recorded")
	require.Equal(t, acked, h.stored(op.ID))
}
