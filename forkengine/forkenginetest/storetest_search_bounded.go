package forkenginetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Bounded search reads (SearchSessions, CountSearch): a read examines at most scan rows of its
// rarest word, stops at a position when that bound comes first, and a client that reads on from
// the position reaches every match once. The bound is small here so that a few dozen sessions
// cross it; the API uses forkengine.SearchScanRows.

// boundedPages reads every page of a bounded search, forward or backward, from the start,
// following Reached when a page stops at the bound, and returns the ids in list order and the
// number of reads. A read that returns nothing and names no position ends it; a read that
// stops at a position moves past the cursor it started from, or the test fails.
func boundedPages(t *testing.T, s forkengine.Store, f forkengine.SessionFilter, size, scan int, backward bool) ([]string, int) {
	t.Helper()
	ctx := context.Background()
	var got []string
	reads := 0
	for from := (forkengine.PageCursor{}); ; reads++ {
		require.Less(t, reads, 200, "paging on ends")
		page, err := s.SearchSessions(ctx, wsA, f, from, size, scan, backward)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Sessions), size)
		for _, sess := range page.Sessions {
			if backward {
				got = append([]string{sess.ID}, got...)
			} else {
				got = append(got, sess.ID)
			}
		}
		switch {
		case !page.Reached.IsZero():
			require.Less(t, len(page.Sessions), size, "a page stops at its bound only when short")
			require.NotEqual(t, from, page.Reached, "a position moves on")
			from = page.Reached
		case len(page.Sessions) == size:
			last := page.Sessions[len(page.Sessions)-1]
			from = forkengine.PageCursor{Time: last.CreatedAt, ID: last.ID}
		default:
			return got, reads + 1
		}
	}
}

// seedBoundedSearch stores n sessions, two to a creation time and ids against creation order,
// each saying the words words(i) gives it (none: a session without those words).
func seedBoundedSearch(t *testing.T, s forkengine.Store, n int, words func(i int) string) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("b%03d", n-i)
		seedSearchSession(t, s, wsA, id, "session "+id, i/2, "filler "+words(i))
	}
}

func testSearchBoundedNeverMeet(t *testing.T, s forkengine.Store) {
	// 24 sessions say "alpha", the 24 after them "beta": "alpha beta" matches none, and each
	// word has more rows than the bound.
	seedBoundedSearch(t, s, 48, func(i int) string {
		if i < 24 {
			return "alpha"
		}
		return "beta"
	})
	f := searchFor(t, "alpha beta", forkengine.SessionFilter{})
	ctx := context.Background()
	first, err := s.SearchSessions(ctx, wsA, f, forkengine.PageCursor{}, 3, 5, false)
	require.NoError(t, err)
	require.Empty(t, first.Sessions)
	require.False(t, first.Reached.IsZero(), "the first page stops at its bound, with more to read")
	for _, backward := range []bool{false, true} {
		got, reads := boundedPages(t, s, f, 3, 5, backward)
		require.Empty(t, got, "backward %v", backward)
		require.Equal(t, 5, reads, "24 rows at 5 a read, backward %v", backward)
	}
	c, err := s.CountSearch(ctx, wsA, f, 5)
	require.NoError(t, err)
	require.Equal(t, forkengine.SearchCount{N: 0, LowerBound: true}, c)
	c, err = s.CountSearch(ctx, wsA, f, 0)
	require.NoError(t, err)
	require.Equal(t, forkengine.SearchCount{}, c, "an unbounded count is exact")
}

func testSearchBoundedReachesAll(t *testing.T, s forkengine.Store) {
	// "gamma" every other session, "delta" every third: "delta gamma" every sixth, among rows
	// of each word that lack the other. Two sessions are deleted later, so the read also skips
	// rows of a class the filter leaves out.
	seedBoundedSearch(t, s, 60, func(i int) string {
		var w []string
		if i%2 == 0 {
			w = append(w, "gamma")
		}
		if i%3 == 0 {
			w = append(w, "delta")
		}
		return fmt.Sprint(w)
	})
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		for _, id := range []string{"b060", "b024"} { // i = 0 and 36: matches
			sess, err := tx.GetSession(ctx, wsA, id)
			if err != nil {
				return err
			}
			sess.DeletedAt = timePtr(at(100))
			if err := tx.UpsertSession(ctx, sess); err != nil {
				return err
			}
		}
		return nil
	})
	for _, filter := range []forkengine.SessionFilter{{}, {IncludeDeleted: true}} {
		f := searchFor(t, "gamma delta", filter)
		want := searched(t, s, wsA, f) // unbounded
		require.Len(t, want, 10-2*boolInt(!filter.IncludeDeleted))
		for _, size := range []int{1, 2, 3, 50} {
			for _, scan := range []int{1, 4, 7, 1000} {
				for _, backward := range []bool{false, true} {
					got, _ := boundedPages(t, s, f, size, scan, backward)
					require.Equal(t, want, got, "pages of %d, bound %d, backward %v, deleted %v", size, scan, backward, filter.IncludeDeleted)
				}
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func testSearchBoundedCount(t *testing.T, s forkengine.Store) {
	// As above: "delta" (20 sessions) is rarer than "gamma" (30), so a count walks delta's rows.
	seedBoundedSearch(t, s, 60, func(i int) string {
		var w []string
		if i%2 == 0 {
			w = append(w, "gamma")
		}
		if i%3 == 0 {
			w = append(w, "delta")
		}
		return fmt.Sprint(w)
	})
	ctx := context.Background()
	f := searchFor(t, "gamma delta", forkengine.SessionFilter{})
	for _, c := range []struct {
		scan int
		want forkengine.SearchCount
	}{
		{0, forkengine.SearchCount{N: 10}},
		{20, forkengine.SearchCount{N: 10}},                   // every delta row: exact
		{100, forkengine.SearchCount{N: 10}},                  // below the bound: exact
		{19, forkengine.SearchCount{N: 10, LowerBound: true}}, // every match, but the last delta row (i = 57) is unexamined
		{4, forkengine.SearchCount{N: 2, LowerBound: true}},   // i = 0, 3, 6, 9: 0 and 6 match
		{1, forkengine.SearchCount{N: 1, LowerBound: true}},   // i = 0
	} {
		got, err := s.CountSearch(ctx, wsA, f, c.scan)
		require.NoError(t, err)
		require.Equal(t, c.want, got, "bound %d", c.scan)
		if !got.LowerBound {
			n, err := s.CountSessions(ctx, wsA, f)
			require.NoError(t, err)
			require.Equal(t, n, got.N, "an exact bounded count is CountSessions")
		}
	}
	// One word keeps its exact O(1) count whatever the bound; narrowed by kind it is bounded.
	one := searchFor(t, "gamma", forkengine.SessionFilter{})
	got, err := s.CountSearch(ctx, wsA, one, 4)
	require.NoError(t, err)
	require.Equal(t, forkengine.SearchCount{N: 30}, got)
	kinds := slices.Clone(one.Search)
	byKind := forkengine.SessionFilter{Kind: newSession(wsA, "x").Kind, Search: kinds}
	got, err = s.CountSearch(ctx, wsA, byKind, 4)
	require.NoError(t, err)
	require.Equal(t, forkengine.SearchCount{N: 4, LowerBound: true}, got)
	got, err = s.CountSearch(ctx, wsA, byKind, 30)
	require.NoError(t, err)
	require.Equal(t, forkengine.SearchCount{N: 30}, got)
}
