package resolvers_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/resolvers"
)

// The cap of the deprecated Session.forks (issue 24, docs/design/shared-history.md §7), beside
// the caps of Session.messages and Turn.messages in list_connections_test.go.

// TestDeprecatedForksRefuseMoreThanTheCap: Session.forks lists a session of exactly MaxListLength
// forks whole and refuses one of MaxListLength+1 with BAD_USER_INPUT reason list_too_long, naming
// Session.forksConnection, which pages all MaxListLength+1 of them, each once, in the deprecated
// list's order.
func TestDeprecatedForksRefuseMoreThanTheCap(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	ctx := context.Background()
	api.seedSession("w", "src", 1, "")
	var want []string
	fork := func(i int) {
		// Real committed forks of one boundary, each acknowledged so the barrier lets the next
		// request make a new fork instead of answering with this one.
		opID := api.forkAndCommit("w", "src", "src-t1", fmt.Sprintf("fork-%04d", i))
		op, err := api.engine.Acknowledge(ctx, "w", opID, "")
		require.NoError(t, err)
		want = append(want, op.TargetSessionID)
	}
	for i := range resolvers.MaxListLength {
		fork(i)
	}
	const whole = `{ session(workspaceId: "w", id: "src") { forks { targetSessionId } } }`
	var at struct {
		Session struct {
			Forks []struct{ TargetSessionID string }
		}
	}
	api.mustDo(whole, &at, nil)
	require.Equal(t, resolvers.MaxListLength, len(at.Session.Forks), "a session of exactly the cap's forks is listed whole")
	var listed []string
	for _, f := range at.Session.Forks {
		listed = append(listed, f.TargetSessionID)
	}
	require.ElementsMatch(t, want, listed)

	fork(resolvers.MaxListLength)
	e := api.with(t).expectCode("BAD_USER_INPUT", whole, nil)
	require.Equal(t, resolvers.ReasonListTooLong, e.Extensions["reason"])
	require.Contains(t, e.Message, "Session.forksConnection")

	type forkPage struct {
		TotalCount int
		Edges      []struct {
			Node struct{ TargetSessionID string }
		}
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	}
	var paged []string
	for vars, pages := map[string]any{"first": 200}, 0; ; pages++ {
		require.Less(t, pages, 10, "the connection never ended")
		var out struct {
			Session struct{ ForksConnection forkPage }
		}
		api.mustDo(`query($first: Int, $after: String) { session(workspaceId: "w", id: "src") {
			forksConnection(first: $first, after: $after) { totalCount edges { node { targetSessionId } }
			pageInfo { hasNextPage endCursor } } } }`, &out, vars)
		page := out.Session.ForksConnection
		require.Equal(t, resolvers.MaxListLength+1, page.TotalCount)
		for _, edge := range page.Edges {
			paged = append(paged, edge.Node.TargetSessionID)
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		vars = map[string]any{"first": 200, "after": *page.PageInfo.EndCursor}
	}
	require.Equal(t, resolvers.MaxListLength+1, len(paged), "forks paged")
	require.ElementsMatch(t, want, paged, "every fork once")
	newest := want[resolvers.MaxListLength]
	var older []string
	for _, id := range paged {
		if id != newest {
			older = append(older, id)
		}
	}
	require.Equal(t, listed, older, "the connection pages in the deprecated list's order")
}
