package resolvers_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// relayPage is one page of any connection, with every pageInfo field of the Relay spec.
type relayPage struct {
	Edges []struct {
		Cursor string
		Node   struct{ LocalID string }
	}
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

// pageShape is what a test expects of a page: its ids and its two has* flags.
type pageShape struct {
	IDs              []string
	HasNext, HasPrev bool
}

func (p relayPage) shape(t *testing.T) pageShape {
	t.Helper()
	s := pageShape{HasNext: p.PageInfo.HasNextPage, HasPrev: p.PageInfo.HasPreviousPage}
	for _, e := range p.Edges {
		s.IDs = append(s.IDs, e.Node.LocalID)
	}
	if len(p.Edges) == 0 {
		require.Nil(t, p.PageInfo.StartCursor, "an empty page has no startCursor")
		require.Nil(t, p.PageInfo.EndCursor, "an empty page has no endCursor")
		return s
	}
	require.Equal(t, p.Edges[0].Cursor, *p.PageInfo.StartCursor)
	require.Equal(t, p.Edges[len(p.Edges)-1].Cursor, *p.PageInfo.EndCursor)
	return s
}

const pageFields = `edges { cursor node { localId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`

const sessionsPageQuery = `query($first: Int, $after: String, $last: Int, $before: String) {
  sessions(workspaceId: "w", first: $first, after: $after, last: $last, before: $before) { ` + pageFields + ` } }`

func sessionsPage(t *testing.T, api *testAPI, vars map[string]any) relayPage {
	t.Helper()
	var out struct{ Sessions relayPage }
	api.mustDo(sessionsPageQuery, &out, vars)
	return out.Sessions
}

// TestSessionsRelayPagination walks the sessions forward and backward across page boundaries,
// and from each direction into the other, checking every pageInfo field on the way.
func TestSessionsRelayPagination(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	for _, id := range []string{"s0", "s1", "s2", "s3", "s4"} {
		api.seedSession("w", id, 0, "")
	}
	api.seedSession("other", "s9", 0, "")

	var forward []pageShape
	var pages []relayPage
	vars := map[string]any{"first": 2}
	for range 5 {
		p := sessionsPage(t, api, vars)
		forward, pages = append(forward, p.shape(t)), append(pages, p)
		if !p.PageInfo.HasNextPage {
			break
		}
		vars = map[string]any{"first": 2, "after": *p.PageInfo.EndCursor}
	}
	require.Equal(t, []pageShape{
		{[]string{"s0", "s1"}, true, false},
		{[]string{"s2", "s3"}, true, true},
		{[]string{"s4"}, false, true},
	}, forward)

	var backward []pageShape
	vars = map[string]any{"last": 2}
	for range 5 {
		p := sessionsPage(t, api, vars)
		backward = append(backward, p.shape(t))
		if !p.PageInfo.HasPreviousPage {
			break
		}
		vars = map[string]any{"last": 2, "before": *p.PageInfo.StartCursor}
	}
	require.Equal(t, []pageShape{
		{[]string{"s3", "s4"}, false, true},
		{[]string{"s1", "s2"}, true, true},
		{[]string{"s0"}, true, false},
	}, backward, "edges keep list order on a backward page")

	// From the middle forward page, back one page with its startCursor and on with its endCursor.
	mid := pages[1]
	require.Equal(t, pageShape{[]string{"s0", "s1"}, true, false},
		sessionsPage(t, api, map[string]any{"last": 5, "before": *mid.PageInfo.StartCursor}).shape(t))
	require.Equal(t, pageShape{[]string{"s4"}, false, true},
		sessionsPage(t, api, map[string]any{"first": 5, "after": *mid.PageInfo.EndCursor}).shape(t))
	// An edge's own cursor works as `before` too.
	require.Equal(t, pageShape{[]string{"s2"}, true, true},
		sessionsPage(t, api, map[string]any{"last": 1, "before": mid.Edges[1].Cursor}).shape(t))
	// before alone is last: 50.
	require.Equal(t, pageShape{[]string{"s0", "s1", "s2"}, true, false},
		sessionsPage(t, api, map[string]any{"before": mid.Edges[1].Cursor}).shape(t))
}

// TestEmptyPages: first: 0 and last: 0 answer no edges but a truthful pageInfo, as the Relay
// spec's algorithm does (and as genqlient's unset `first: 0` needs).
func TestEmptyPages(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	empty := pageShape{}
	require.Equal(t, empty, sessionsPage(t, api, map[string]any{"first": 0}).shape(t), "nothing to page")
	require.Equal(t, empty, sessionsPage(t, api, map[string]any{"last": 0}).shape(t))
	require.Equal(t, empty, sessionsPage(t, api, map[string]any{"first": 2}).shape(t))

	api.seedSession("w", "s0", 0, "")
	api.seedSession("w", "s1", 0, "")
	require.Equal(t, pageShape{HasNext: true}, sessionsPage(t, api, map[string]any{"first": 0}).shape(t))
	require.Equal(t, pageShape{HasPrev: true}, sessionsPage(t, api, map[string]any{"last": 0}).shape(t))
	all := sessionsPage(t, api, map[string]any{"first": 2})
	require.Equal(t, pageShape{HasPrev: true}, sessionsPage(t, api,
		map[string]any{"first": 2, "after": *all.PageInfo.EndCursor}).shape(t), "past the end")
	require.Equal(t, pageShape{HasNext: true}, sessionsPage(t, api,
		map[string]any{"last": 2, "before": *all.PageInfo.StartCursor}).shape(t), "before the start")
}

// TestTurnsRelayPagination pages one session's turns backward from its end and forward again,
// and the turns of several sessions backward in one response.
func TestTurnsRelayPagination(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 5, "")
	api.seedSession("w", "short", 1, "")
	turns := func(vars map[string]any) relayPage {
		var out struct{ Session struct{ Turns relayPage } }
		api.mustDo(`query($first: Int, $after: String, $last: Int, $before: String) {
			session(workspaceId: "w", id: "s") { turns(first: $first, after: $after, last: $last, before: $before) { `+
			pageFields+` } } }`, &out, vars)
		return out.Session.Turns
	}
	last := turns(map[string]any{"last": 2})
	require.Equal(t, pageShape{[]string{"s-t4", "s-t5"}, false, true}, last.shape(t))
	prev := turns(map[string]any{"last": 2, "before": *last.PageInfo.StartCursor})
	require.Equal(t, pageShape{[]string{"s-t2", "s-t3"}, true, true}, prev.shape(t))
	start := turns(map[string]any{"last": 2, "before": *prev.PageInfo.StartCursor})
	require.Equal(t, pageShape{[]string{"s-t1"}, true, false}, start.shape(t))
	require.Equal(t, pageShape{[]string{"s-t2", "s-t3", "s-t4"}, true, true},
		turns(map[string]any{"first": 3, "after": *start.PageInfo.EndCursor}).shape(t))
	require.Equal(t, pageShape{HasNext: true}, turns(map[string]any{"first": 0}).shape(t))

	var both struct {
		Sessions struct {
			Edges []struct {
				Node struct {
					ID    string
					Turns relayPage
				}
			}
		}
	}
	api.mustDo(`{ sessions(workspaceId: "w") { edges { node { id turns(last: 2) { `+pageFields+` } } } } }`, &both, nil)
	require.Len(t, both.Sessions.Edges, 2)
	require.Equal(t, pageShape{[]string{"s-t4", "s-t5"}, false, true}, both.Sessions.Edges[0].Node.Turns.shape(t))
	require.Equal(t, pageShape{[]string{"short-t1"}, false, false}, both.Sessions.Edges[1].Node.Turns.shape(t))
}

// TestForkOperationsRelayPagination pages operations backward from the newest.
func TestForkOperationsRelayPagination(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 3, "")
	var opIDs []string
	for i := 1; i <= 3; i++ {
		opIDs = append(opIDs, api.forkAndCommit("w", "src", fmt.Sprintf("src-t%d", i), fmt.Sprintf("req-%d", i)))
	}
	ops := func(vars map[string]any) relayPage {
		var out struct{ ForkOperations relayPage }
		api.mustDo(`query($first: Int, $after: String, $last: Int, $before: String) {
			forkOperations(workspaceId: "w", first: $first, after: $after, last: $last, before: $before) { `+
			pageFields+` } }`, &out, vars)
		return out.ForkOperations
	}
	last := ops(map[string]any{"last": 2})
	require.Equal(t, pageShape{opIDs[1:], false, true}, last.shape(t))
	require.Equal(t, pageShape{opIDs[:1], true, false},
		ops(map[string]any{"last": 2, "before": *last.PageInfo.StartCursor}).shape(t))
	require.Equal(t, pageShape{opIDs[:2], true, false}, ops(map[string]any{"first": 2}).shape(t))
}

// TestBackwardTurnPagesAreBatched: `turns(last:)` under a sessions page costs the same number
// of SQL statements for 5 sessions as for 40.
func TestBackwardTurnPagesAreBatched(t *testing.T) {
	t.Parallel()
	measure := func(n int) int64 {
		api := newTestAPI(t, apiOptions{})
		for i := range n {
			api.seedSession("w", fmt.Sprintf("s%03d", i), 3, "")
		}
		var out struct {
			Sessions struct {
				Edges []struct{ Node struct{ Turns relayPage } }
			}
		}
		before := api.db.Statements()
		api.mustDo(`{ sessions(workspaceId: "w", last: 200) { edges { node {
			turns(last: 2) { `+pageFields+` } } } pageInfo { hasPreviousPage } } }`, &out, nil)
		require.Len(t, out.Sessions.Edges, n)
		require.Len(t, out.Sessions.Edges[0].Node.Turns.Edges, 2)
		return api.db.Statements() - before
	}
	require.Equal(t, measure(5), measure(40))
}

// A cursor belongs to the list it was read from (docs/api.md, Pagination): another session's
// turns cursor or another workspace's sessions cursor is invalid_cursor, not a page of this list
// from that list's position.
func TestCursorOfAnotherListIsRefused(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("x", "a", 3, "")
	api.seedSession("x", "b", 3, "")
	api.seedSession("y", "c", 0, "")

	var turns struct{ Session struct{ Turns relayPage } }
	api.mustDo(`{ session(workspaceId: "x", id: "a") { turns(first: 1) { `+pageFields+` } } }`, &turns, nil)
	cursorOfA := *turns.Session.Turns.PageInfo.EndCursor
	t.Run("turns cursor of another session", func(t *testing.T) {
		e := api.with(t).expectCode("BAD_USER_INPUT", `query($after: String) { session(workspaceId: "x", id: "b") {
			turns(first: 5, after: $after) { edges { node { localId } } } } }`, map[string]any{"after": cursorOfA})
		require.Equal(t, "invalid_cursor", e.Extensions["reason"])
	})

	var sessions struct{ Sessions relayPage }
	api.mustDo(`{ sessions(workspaceId: "x", first: 1) { `+pageFields+` } }`, &sessions, nil)
	cursorOfX := *sessions.Sessions.PageInfo.EndCursor
	t.Run("sessions cursor of another workspace", func(t *testing.T) {
		e := api.with(t).expectCode("BAD_USER_INPUT", `query($after: String) {
			sessions(workspaceId: "y", first: 5, after: $after) { edges { node { localId } } } }`, map[string]any{"after": cursorOfX})
		require.Equal(t, "invalid_cursor", e.Extensions["reason"])
	})
	t.Run("sessions cursor under another filter", func(t *testing.T) {
		e := api.with(t).expectCode("BAD_USER_INPUT", `query($after: String) {
			sessions(workspaceId: "x", first: 5, after: $after, filter: {rootsOnly: true}) { edges { node { localId } } } }`,
			map[string]any{"after": cursorOfX})
		require.Equal(t, "invalid_cursor", e.Extensions["reason"])
	})
	t.Run("the same list still pages", func(t *testing.T) {
		var next struct{ Sessions relayPage }
		api.mustDo(`query($after: String) { sessions(workspaceId: "x", first: 5, after: $after) { `+pageFields+` } }`,
			&next, map[string]any{"after": cursorOfX})
		require.Len(t, next.Sessions.Edges, 1)
	})
}
