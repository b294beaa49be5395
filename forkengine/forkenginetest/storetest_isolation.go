package forkenginetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// isolationTests pin the workspace filter of every operation lookup: an operation of wsA is
// invisible to wsB by id, by request id, by boundary, by target, by source and in lists, even
// when wsB has an operation with the same id. Workspace isolation must not rest on the
// resolvers' token check alone; a store that dropped one WHERE clause fails here.
func isolationTests() map[string]storeTest {
	return map[string]storeTest{
		"OperationOfAnotherWorkspaceIsInvisible": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			insertOperations(t, s, newOperation(wsA, "op1", "src", "src-t1", "dst", forkengine.StatusPrepared))

			_, err := s.GetOperation(ctx, wsB, "op1")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "GetOperation")
			_, err = s.GetOperationByRequestID(ctx, wsB, "req-op1")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "GetOperationByRequestID")
			_, err = s.LatestOperationOnBoundary(ctx, wsB, "src", "src-t1")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "LatestOperationOnBoundary")
			_, err = s.LatestOperationStateOnBoundary(ctx, wsB, "src", "src-t1")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "LatestOperationStateOnBoundary")
			_, err = s.OperationReservingTarget(ctx, wsB, "dst")
			require.ErrorIs(t, err, forkengine.ErrNotFound, "OperationReservingTarget")

			byID, err := s.OperationsByIDs(ctx, wsB, []string{"op1"})
			require.NoError(t, err)
			require.Empty(t, byID, "OperationsByIDs")
			bySource, err := s.OperationsBySourceIDs(ctx, wsB, []string{"src"})
			require.NoError(t, err)
			require.Empty(t, bySource, "OperationsBySourceIDs")
			listed, err := s.ListOperations(ctx, wsB, forkengine.OperationFilter{}, forkengine.PageCursor{}, 10)
			require.NoError(t, err)
			require.Empty(t, listed, "ListOperations")
			n, err := s.CountOperations(ctx, wsB, forkengine.OperationFilter{})
			require.NoError(t, err)
			require.Zero(t, n, "CountOperations")

			got, err := s.GetOperation(ctx, wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, wsA, got.WorkspaceID, "the owner still sees it")
		},
		"SameOperationIDInTwoWorkspacesStaysApart": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			a := newOperation(wsA, "op1", "src-a", "src-a-t1", "dst-a", forkengine.StatusPrepared)
			b := newOperation(wsB, "op1", "src-b", "src-b-t1", "dst-b", forkengine.StatusFailed)
			insertOperations(t, s, a, b)
			for ws, want := range map[string]forkengine.ForkOperation{wsA: a, wsB: b} {
				got, err := s.GetOperation(ctx, ws, "op1")
				require.NoError(t, err)
				require.Equal(t, want.SourceSessionID, got.SourceSessionID, "GetOperation(%s)", ws)
				byID, err := s.OperationsByIDs(ctx, ws, []string{"op1"})
				require.NoError(t, err)
				require.Equal(t, want.SourceSessionID, byID["op1"].SourceSessionID, "OperationsByIDs(%s)", ws)
				byReq, err := s.GetOperationByRequestID(ctx, ws, "req-op1")
				require.NoError(t, err)
				require.Equal(t, want.SourceSessionID, byReq.SourceSessionID, "GetOperationByRequestID(%s)", ws)
			}
		},
		"SessionOfAnotherWorkspaceIsInvisible": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.UpsertSession(ctx, newSession(wsA, "s1"))
			})
			byID, err := s.SessionsByIDs(ctx, wsB, []string{"s1"})
			require.NoError(t, err)
			require.Empty(t, byID, "SessionsByIDs")
			n, err := s.CountSessions(ctx, wsB, forkengine.SessionFilter{})
			require.NoError(t, err)
			require.Zero(t, n, "CountSessions")
		},
	}
}
