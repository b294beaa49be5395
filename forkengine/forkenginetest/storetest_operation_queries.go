package forkenginetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// opAt is an operation created at minute m of the fixture clock.
func opAt(ws, id, source, through, target string, status forkengine.OperationStatus, m int) forkengine.ForkOperation {
	op := newOperation(ws, id, source, through, target, status)
	op.CreatedAt, op.UpdatedAt = at(m), at(m)
	return op
}

func operationQueryTests() map[string]storeTest {
	return map[string]storeTest{
		"LatestOperationsOnBoundariesInOneRead": func(t *testing.T, s forkengine.Store) {
			old := newOperation(wsA, "old", "s1", "t1", "x1", forkengine.StatusFailed)
			newer := newOperation(wsA, "newer", "s1", "t1", "x2", forkengine.StatusUnknown)
			newer.CreatedAt = at(20)
			other := newOperation(wsA, "other", "s2", "t2", "x3", forkengine.StatusCommitted)
			elsewhere := newOperation(wsB, "elsewhere", "s1", "t3", "x4", forkengine.StatusPrepared)
			insertOperations(t, s, old, newer, other, elsewhere)
			got, err := s.LatestOperationsOnBoundaries(context.Background(), wsA, []forkengine.Boundary{
				{SessionID: "s1", TurnID: "t1"}, {SessionID: "s2", TurnID: "t2"}, {SessionID: "s1", TurnID: "t2"},
				{SessionID: "s1", TurnID: "t3"}, {SessionID: "s1", TurnID: "t1"}})
			require.NoError(t, err)
			require.Len(t, got, 2, "no operation on s1/t2; s1/t3 is another workspace's")
			require.Equal(t, "newer", got[forkengine.Boundary{SessionID: "s1", TurnID: "t1"}].ID)
			require.Equal(t, "other", got[forkengine.Boundary{SessionID: "s2", TurnID: "t2"}].ID)
			require.Zero(t, got[forkengine.Boundary{SessionID: "s1", TurnID: "t1"}].Snapshot.Version)
		},
		"LookupsByIDRequestIDAndSource": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			a := opAt(wsA, "a", "s1", "t1", "x1", forkengine.StatusCommitted, 2)
			b := opAt(wsA, "b", "s2", "t1", "x2", forkengine.StatusFailed, 1)
			c := opAt(wsA, "c", "s1", "t2", "x3", forkengine.StatusPrepared, 1)
			insertOperations(t, s, a, b, c, opAt(wsB, "a", "s1", "t9", "x1", forkengine.StatusFailed, 0))

			byID, err := s.OperationsByIDs(ctx, wsA, []string{"a", "c", "nope"})
			require.NoError(t, err)
			require.Equal(t, map[string]forkengine.ForkOperation{"a": a, "c": c}, byID)
			byReq, err := s.GetOperationByRequestID(ctx, wsA, "req-b")
			require.NoError(t, err)
			require.Equal(t, b, byReq)
			bySource, err := s.OperationsBySourceIDs(ctx, wsA, []string{"s1", "nope"})
			require.NoError(t, err)
			require.Equal(t, []string{"c", "a"}, ids(bySource, operationID), "in (CreatedAt, ID) order")
		},
		"LatestOnBoundaryIsNewestByCreatedAtThenID": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			latest := opAt(wsA, "b", "s1", "t1", "x1", forkengine.StatusFailed, 5)
			latest.Snapshot = forkengine.Snapshot{Version: 1, Session: newSession(wsA, "s1"),
				Turns: []forkengine.Turn{newTurn(wsA, "s1", "t1", 1)}}
			insertOperations(t, s,
				latest,
				opAt(wsA, "a", "s1", "t1", "x2", forkengine.StatusFailed, 5),
				opAt(wsA, "z", "s1", "t1", "x3", forkengine.StatusCommitted, 4),
				opAt(wsA, "later-other-turn", "s1", "t2", "x4", forkengine.StatusFailed, 9),
				opAt(wsB, "later-other-ws", "s1", "t1", "x5", forkengine.StatusFailed, 9),
			)
			got, err := s.LatestOperationOnBoundary(ctx, wsA, "s1", "t1")
			require.NoError(t, err)
			require.Equal(t, "b", got.ID)
			state, err := s.LatestOperationStateOnBoundary(ctx, wsA, "s1", "t1")
			require.NoError(t, err)
			require.Equal(t, got.State(), state, "the same operation's state")
			_, err = s.LatestOperationStateOnBoundary(ctx, wsA, "s1", "nope")
			require.ErrorIs(t, err, forkengine.ErrNotFound)
		},
		"ListPagesAndCountsWithFilters": testListOperations,
		"RecoverablePagesActiveAcrossWorkspaces": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			insertOperations(t, s,
				opAt(wsA, "a3", "s1", "t1", "x1", forkengine.StatusPrepared, 3),
				opAt(wsB, "b1", "s1", "t1", "x1", forkengine.StatusDispatching, 1),
				opAt(wsA, "a1", "s1", "t2", "x2", forkengine.StatusProviderAccepted, 1),
				opAt(wsB, "b2", "s1", "t2", "x2", forkengine.StatusPrepared, 2),
				opAt(wsA, "done", "s1", "t3", "x3", forkengine.StatusCommitted, 0),
				opAt(wsA, "failed", "s1", "t4", "x4", forkengine.StatusFailed, 0),
				opAt(wsA, "unknown", "s1", "t5", "x5", forkengine.StatusUnknown, 0),
			)
			var seen, workspaces []string
			var after forkengine.PageCursor
			for {
				page, err := s.RecoverableOperations(ctx, after, 2)
				require.NoError(t, err)
				require.LessOrEqual(t, len(page), 2)
				if len(page) == 0 {
					break
				}
				for _, op := range page {
					seen = append(seen, op.ID)
					workspaces = append(workspaces, op.WorkspaceID)
				}
				last := page[len(page)-1]
				after = forkengine.PageCursor{Time: last.CreatedAt, ID: last.ID}
			}
			require.Equal(t, []string{"a1", "b1", "b2", "a3"}, seen)
			require.Equal(t, []string{wsA, wsB, wsB, wsA}, workspaces)
		},
	}
}

// insertFilteredOperations inserts the operations the filter tests page: in workspace A, o3
// first (minute 0), o1 and o2 sharing minute 1 (the id decides), o4 last, of two sources,
// boundaries and statuses; o5 in workspace B, which no read of A returns.
func insertFilteredOperations(t *testing.T, s forkengine.Store) {
	t.Helper()
	insertOperations(t, s,
		opAt(wsA, "o1", "s1", "t1", "x1", forkengine.StatusCommitted, 1),
		opAt(wsA, "o2", "s1", "t2", "x2", forkengine.StatusFailed, 1),
		opAt(wsA, "o3", "s2", "t1", "x3", forkengine.StatusPrepared, 0),
		opAt(wsA, "o4", "s1", "t1", "x4", forkengine.StatusFailed, 3),
		opAt(wsB, "o5", "s1", "t1", "x1", forkengine.StatusCommitted, 0),
	)
}

func testListOperations(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	insertFilteredOperations(t, s)
	cases := []struct {
		filter forkengine.OperationFilter
		want   []string
	}{
		{forkengine.OperationFilter{}, []string{"o3", "o1", "o2", "o4"}},
		{forkengine.OperationFilter{SourceSessionID: "s1"}, []string{"o1", "o2", "o4"}},
		{forkengine.OperationFilter{SourceSessionID: "s1", ThroughTurnID: "t1"}, []string{"o1", "o4"}},
		{forkengine.OperationFilter{TargetSessionID: "x3"}, []string{"o3"}},
		{forkengine.OperationFilter{Statuses: []forkengine.OperationStatus{forkengine.StatusFailed}}, []string{"o2", "o4"}},
		{forkengine.OperationFilter{Statuses: []forkengine.OperationStatus{forkengine.StatusFailed, forkengine.StatusPrepared}, ThroughTurnID: "t1"}, []string{"o3", "o4"}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%+v", c.filter)
		var seen []string
		for _, page := range pages(t, 1, func(after forkengine.PageCursor, n int) ([]forkengine.ForkOperation, error) {
			return s.ListOperations(ctx, wsA, c.filter, after, n)
		}, operationCursor) {
			seen = append(seen, page[0].ID)
		}
		require.Equal(t, c.want, seen, name)
		n, err := s.CountOperations(ctx, wsA, c.filter)
		require.NoError(t, err, name)
		require.Equal(t, len(c.want), n, name)
	}
}
