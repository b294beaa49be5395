package forkenginetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// backwardTests cover the readers of Relay `last`/`before` pages: newest first, strictly before
// the cursor, the limit keeping the rows nearest it, filters and workspaces as the forward reads.
func backwardTests() map[string]storeTest {
	return map[string]storeTest{
		"SessionsBeforePageNewestFirstAcrossTies": testSessionsBefore,
		"SessionsBeforeApplyFilters": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			seedSessionWithTurns(t, s, wsA, "live", 0)
			seedSessionWithTurns(t, s, wsA, "gone", 0)
			seedSessionWithTurns(t, s, wsB, "other", 0)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
				return tx.SoftDeleteSession(ctx, wsA, "gone", at(9))
			})
			got, err := s.ListSessionsBefore(ctx, wsA, forkengine.SessionFilter{}, forkengine.PageCursor{}, 0)
			require.NoError(t, err)
			require.Equal(t, []string{"live"}, ids(got, sessionID), "deleted and other workspaces excluded")
			got, err = s.ListSessionsBefore(ctx, wsA, forkengine.SessionFilter{IncludeDeleted: true}, forkengine.PageCursor{}, 0)
			require.NoError(t, err)
			require.Equal(t, []string{"live", "gone"}, ids(got, sessionID))
		},
		"OperationsBeforePageNewestFirstWithFilters": testOperationsBefore,
		"TurnsBeforePageEachSessionFromItsEnd":       testTurnsBefore,
	}
}

func testSessionsBefore(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	seedPagedSessions(t, s)
	var seen [][]string
	for _, page := range pages(t, 2, func(before forkengine.PageCursor, n int) ([]forkengine.Session, error) {
		return s.ListSessionsBefore(ctx, wsA, forkengine.SessionFilter{}, before, n)
	}, sessionCursor) {
		seen = append(seen, ids(page, sessionID))
	}
	require.Equal(t, [][]string{{"e", "a"}, {"d", "c"}, {"b"}}, seen, "a tie on CreatedAt is crossed by id")
	all, err := s.ListSessionsBefore(ctx, wsA, forkengine.SessionFilter{}, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"e", "a", "d", "c", "b"}, ids(all, sessionID), "limit <= 0 returns every row")
	inside, err := s.ListSessionsBefore(ctx, wsA, forkengine.SessionFilter{}, forkengine.PageCursor{Time: at(1), ID: "d"}, 5)
	require.NoError(t, err)
	require.Equal(t, []string{"c", "b"}, ids(inside, sessionID), "strictly before the cursor")
}

func testOperationsBefore(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	insertFilteredOperations(t, s)
	cases := []struct {
		filter forkengine.OperationFilter
		want   []string // ascending, as ListOperations pages them
	}{
		{forkengine.OperationFilter{}, []string{"o3", "o1", "o2", "o4"}},
		{forkengine.OperationFilter{SourceSessionID: "s1", ThroughTurnID: "t1"}, []string{"o1", "o4"}},
		{forkengine.OperationFilter{Statuses: []forkengine.OperationStatus{forkengine.StatusFailed}}, []string{"o2", "o4"}},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%+v", c.filter)
		var seen []string
		for _, page := range pages(t, 1, func(before forkengine.PageCursor, n int) ([]forkengine.ForkOperation, error) {
			return s.ListOperationsBefore(ctx, wsA, c.filter, before, n)
		}, operationCursor) {
			seen = append(seen, page[0].ID)
		}
		slices.Reverse(seen)
		require.Equal(t, c.want, seen, name)
	}
}

func testTurnsBefore(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	s1, s2, sessions := seedTurnPages(t, s)
	rev := func(ts ...forkengine.Turn) []forkengine.Turn { slices.Reverse(ts); return ts }

	all, err := s.TurnsBySessionIDsBefore(ctx, wsA, sessions, 0, 0)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": rev(slices.Clone(s1)...), "s2": rev(slices.Clone(s2)...)}, all)

	last, err := s.TurnsBySessionIDsBefore(ctx, wsA, sessions, 0, 2)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": {s1[4], s1[3]}, "s2": {s2[1], s2[0]}}, last, "the last two of each")

	page, err := s.TurnsBySessionIDsBefore(ctx, wsA, sessions, 4, 2)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": {s1[2], s1[1]}, "s2": {s2[1], s2[0]}}, page, "strictly before sequence 4")

	start, err := s.TurnsBySessionIDsBefore(ctx, wsA, sessions, 2, 10)
	require.NoError(t, err)
	require.Equal(t, map[string][]forkengine.Turn{"s1": {s1[0]}, "s2": {s2[0]}}, start)

	none, err := s.TurnsBySessionIDsBefore(ctx, wsA, sessions, 1, 10)
	require.NoError(t, err)
	require.Empty(t, none, "nothing precedes the first turn")
}
