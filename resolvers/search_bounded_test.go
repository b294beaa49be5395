package resolvers_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/resolvers"
)

const boundedSearchQuery = `query($search: String, $first: Int, $after: String, $last: Int, $before: String) {
  sessions(workspaceId: "w", search: $search, first: $first, after: $after, last: $last, before: $before) {
    totalCount totalCountIsLowerBound ` + pageFields + ` } }`

type boundedSearchPage struct {
	TotalCount             int
	TotalCountIsLowerBound bool
	relayPage
}

// TestSessionsSearchBounded: with the scan bound at 3 index rows, a search of words that never
// meet answers empty pages that say more follow, with a cursor at the position reached, until
// the rows end; a search whose words meet is paged to exactly its matches, forward and back;
// totalCount is a lower bound past the bound and says so, and exact for one word.
func TestSessionsSearchBounded(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{limits: func(c *resolvers.Config) { c.SearchScanRows = 3 }})
	var both []string
	for i := range 12 {
		id := fmt.Sprintf("s%02d", i)
		api.seedSession("w", id, 1, "")
		words := "beta"
		if i < 6 {
			words = "alpha"
		}
		if i%2 == 0 {
			words += " gamma"
		}
		if i%3 == 0 {
			words += " delta"
		}
		if i%6 == 0 {
			both = append(both, id)
		}
		api.say(id, id+"-t1", words)
	}
	page := func(vars map[string]any) boundedSearchPage {
		var out struct{ Sessions boundedSearchPage }
		api.mustDo(boundedSearchQuery, &out, vars)
		return out.Sessions
	}
	readAll := func(search string, size int, backward bool) ([]string, int) {
		var got []string
		reads := 0
		vars := map[string]any{"search": search, "first": size}
		if backward {
			vars = map[string]any{"search": search, "last": size}
		}
		for ; reads < 50; reads++ {
			p := page(vars)
			for i := range p.Edges {
				if backward {
					got = append([]string{p.Edges[len(p.Edges)-1-i].Node.LocalID}, got...)
				} else {
					got = append(got, p.Edges[i].Node.LocalID)
				}
			}
			if !backward && !p.PageInfo.HasNextPage || backward && !p.PageInfo.HasPreviousPage {
				return got, reads + 1
			}
			if backward {
				require.NotNil(t, p.PageInfo.StartCursor)
				vars["before"] = *p.PageInfo.StartCursor
			} else {
				require.NotNil(t, p.PageInfo.EndCursor)
				vars["after"] = *p.PageInfo.EndCursor
			}
		}
		t.Fatalf("search %q did not end", search)
		return nil, 0
	}

	first := page(map[string]any{"search": "alpha beta", "first": 2})
	require.Empty(t, first.Edges)
	require.True(t, first.PageInfo.HasNextPage, "the bound stopped the page, not the end of the rows")
	require.NotNil(t, first.PageInfo.EndCursor, "an empty page stopped by the bound names where it stopped")
	require.Equal(t, first.PageInfo.StartCursor, first.PageInfo.EndCursor)
	require.Equal(t, 0, first.TotalCount)
	require.True(t, first.TotalCountIsLowerBound)
	for _, backward := range []bool{false, true} {
		got, reads := readAll("alpha beta", 2, backward)
		require.Empty(t, got)
		require.Equal(t, 2, reads, "6 rows of a word, 3 a read (backward %v)", backward)
	}

	for _, size := range []int{1, 2, 5} {
		for _, backward := range []bool{false, true} {
			got, _ := readAll("gamma delta", size, backward)
			require.Equal(t, both, got, "pages of %d, backward %v", size, backward)
		}
	}
	counted := page(map[string]any{"search": "gamma delta", "first": 1})
	require.True(t, counted.TotalCountIsLowerBound, "4 delta rows, 3 counted")
	require.Equal(t, 2, counted.TotalCount, "s00, s03, s06 counted: s00 and s06 match")
	one := page(map[string]any{"search": "gamma", "first": 1})
	require.Equal(t, 6, one.TotalCount)
	require.False(t, one.TotalCountIsLowerBound, "one word is counted exactly")
	plain := page(map[string]any{"first": 1})
	require.Equal(t, 12, plain.TotalCount)
	require.False(t, plain.TotalCountIsLowerBound)
}
