package resolvers_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/resolvers"
)

// The connections of the transcript, of a turn's messages and of a session's forks (issue 24,
// docs/design/shared-history.md §7), and the cap of the deprecated whole lists.

// countedPage is one page of a connection with its totalCount.
type countedPage struct {
	relayPage
	TotalCount int
}

// pageAll pages a connection to its end with first (forward) or last (backward) and returns the
// local ids in list order, checking every page's shape and count on the way.
func pageAll(t *testing.T, size int, backward bool, read func(vars map[string]any) countedPage) ([]string, int) {
	t.Helper()
	var ids []string
	vars := map[string]any{"first": size}
	if backward {
		vars = map[string]any{"last": size}
	}
	total := -1
	for range 1000 {
		page := read(vars)
		shape := page.shape(t)
		require.LessOrEqual(t, len(shape.IDs), size)
		if total >= 0 {
			require.Equal(t, total, page.TotalCount, "totalCount is the same on every page")
		}
		total = page.TotalCount
		if backward {
			ids = append(append([]string(nil), shape.IDs...), ids...)
			if !shape.HasPrev {
				return ids, total
			}
			vars = map[string]any{"last": size, "before": *page.PageInfo.StartCursor}
		} else {
			ids = append(ids, shape.IDs...)
			if !shape.HasNext {
				return ids, total
			}
			vars = map[string]any{"first": size, "after": *page.PageInfo.EndCursor}
		}
	}
	t.Fatal("the connection never ended")
	return nil, 0
}

// TestMessageConnectionsPageTheTranscript: a fork's transcript (inherited turns, a message the
// source appended after the fork, the child's own turns) paged in both directions and several
// sizes is exactly the deprecated whole list, as is every turn's.
func TestMessageConnectionsPageTheTranscript(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	ctx := context.Background()
	api.seedSession("w", "src", 4, "")
	opID := api.forkAndCommit("w", "src", "src-t3", "fork-1")
	op, err := api.engine.Reader().GetOperation(ctx, "w", opID)
	require.NoError(t, err)
	child := op.TargetSessionID
	_, err = api.engine.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "w", SessionID: "src", TurnID: "src-t2",
		Messages: []forkengine.MessageInput{{ID: "late", Role: forkengine.RoleUser, Content: "after the fork"}}})
	require.NoError(t, err)
	api.seedTurn("w", child, "own-t4", forkengine.PhaseSettled)

	for _, session := range []string{"src", child} {
		var whole struct {
			Session struct {
				Messages []struct{ LocalID string }
				Turns    struct {
					Edges []struct {
						Node struct {
							ID       string
							LocalID  string
							Messages []struct{ LocalID string }
						}
					}
				}
			}
		}
		api.mustDo(`query($id: ID!) { session(workspaceId: "w", id: $id) { messages { localId }
			turns(first: 200) { edges { node { id localId messages { localId } } } } } }`, &whole, map[string]any{"id": session})
		var want []string
		for _, m := range whole.Session.Messages {
			want = append(want, m.LocalID)
		}
		require.Len(t, want, map[string]int{"src": 9, child: 8}[session])
		for _, size := range []int{1, 3, 50} {
			for _, backward := range []bool{false, true} {
				got, total := pageAll(t, size, backward, func(vars map[string]any) countedPage {
					vars["id"] = session
					var out struct {
						Session struct{ MessagesConnection countedPage }
					}
					api.mustDo(`query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
						session(workspaceId: "w", id: $id) { messagesConnection(first: $first, after: $after, last: $last, before: $before) {
						totalCount `+pageFields+` } } }`, &out, vars)
					return out.Session.MessagesConnection
				})
				require.Equal(t, want, got, "%s by %d (backward %v)", session, size, backward)
				require.Equal(t, len(want), total)
			}
		}
		for _, turn := range whole.Session.Turns.Edges {
			var turnWant []string
			for _, m := range turn.Node.Messages {
				turnWant = append(turnWant, m.LocalID)
			}
			for _, backward := range []bool{false, true} {
				got, total := pageAll(t, 1, backward, func(vars map[string]any) countedPage {
					vars["id"] = turn.Node.ID
					var out struct {
						Node struct{ MessagesConnection countedPage }
					}
					api.mustDo(`query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
						node(id: $id) { ... on Turn { messagesConnection(first: $first, after: $after, last: $last, before: $before) {
						totalCount `+pageFields+` } } } }`, &out, vars)
					return out.Node.MessagesConnection
				})
				require.Equal(t, turnWant, got, "turn %s (backward %v)", turn.Node.LocalID, backward)
				require.Equal(t, len(turnWant), total)
			}
		}
	}
}

// TestForksConnectionPagesTheForks: the forks of a session, paged both ways, are the deprecated
// list in order, and a cursor of another session's forks is refused.
func TestForksConnectionPagesTheForks(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 5, "")
	api.seedSession("w", "other", 1, "")
	for i := range 5 {
		api.forkAndCommit("w", "src", fmt.Sprintf("src-t%d", 1+i), fmt.Sprintf("fork-%d", i))
	}
	api.forkAndCommit("w", "other", "other-t1", "fork-other")
	type forkPage struct {
		TotalCount int
		Edges      []struct {
			Cursor string
			Node   struct{ TargetSessionID string }
		}
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       *string
		}
	}
	const fields = `totalCount edges { cursor node { targetSessionId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`
	var whole struct {
		Session struct {
			Forks []struct{ TargetSessionID string }
		}
	}
	api.mustDo(`{ session(workspaceId: "w", id: "src") { forks { targetSessionId } } }`, &whole, nil)
	var want []string
	for _, f := range whole.Session.Forks {
		want = append(want, f.TargetSessionID)
	}
	require.Len(t, want, 5)
	read := func(vars map[string]any) forkPage {
		var out struct {
			Session struct{ ForksConnection forkPage }
		}
		api.mustDo(`query($first: Int, $after: String, $last: Int, $before: String) { session(workspaceId: "w", id: "src") {
			forksConnection(first: $first, after: $after, last: $last, before: $before) { `+fields+` } } }`, &out, vars)
		return out.Session.ForksConnection
	}
	var got []string
	for vars := map[string]any{"first": 2}; ; {
		page := read(vars)
		require.Equal(t, 5, page.TotalCount)
		for _, e := range page.Edges {
			got = append(got, e.Node.TargetSessionID)
		}
		if !page.PageInfo.HasNextPage {
			break
		}
		vars = map[string]any{"first": 2, "after": *page.PageInfo.EndCursor}
	}
	require.Equal(t, want, got)
	got = nil
	for vars := map[string]any{"last": 2}; ; {
		page := read(vars)
		var ids []string
		for _, e := range page.Edges {
			ids = append(ids, e.Node.TargetSessionID)
		}
		got = append(ids, got...)
		if !page.PageInfo.HasPreviousPage {
			break
		}
		vars = map[string]any{"last": 2, "before": *page.PageInfo.StartCursor}
	}
	require.Equal(t, want, got)

	var other struct {
		Session struct{ ForksConnection forkPage }
	}
	api.mustDo(`{ session(workspaceId: "w", id: "other") { forksConnection(first: 1) { `+fields+` } } }`, &other, nil)
	e := api.with(t).expectCode("BAD_USER_INPUT", `query($after: String) { session(workspaceId: "w", id: "src") {
		forksConnection(first: 1, after: $after) { totalCount } } }`, map[string]any{"after": other.Session.ForksConnection.Edges[0].Cursor})
	require.Equal(t, "invalid_cursor", e.Extensions["reason"])
	e = api.with(t).expectCode("BAD_USER_INPUT", `{ session(workspaceId: "w", id: "src") {
		messagesConnection(first: 201) { totalCount } } }`, nil)
	require.Equal(t, "invalid_first", e.Extensions["reason"])
}

// TestListConnectionsAreBatched: the three connections and their counts under a sessions page
// cost the same number of SQL statements for 5 sessions as for 40, and for a fork 1 deep as for
// one 20 deep.
func TestListConnectionsAreBatched(t *testing.T) {
	t.Parallel()
	const query = `{ sessions(workspaceId: "w", first: 200) { edges { node {
		messagesConnection(first: 3) { totalCount edges { cursor node { localId content } } }
		forksConnection(first: 2) { totalCount edges { node { targetSessionId } } }
		turns(first: 2) { edges { node { messagesConnection(last: 1) { totalCount edges { node { localId } } } } } } } } } }`
	measure := func(n int) int64 {
		api := newTestAPI(t, apiOptions{engine: noBackground})
		for i := range n {
			api.seedSession("w", fmt.Sprintf("s%03d", i), 3, "")
		}
		api.forkAndCommit("w", "s000", "s000-t2", "fork-a")
		api.forkAndCommit("w", "s001", "s001-t3", "fork-b")
		var out struct {
			Sessions struct {
				Edges []struct {
					Node struct {
						MessagesConnection countedPage
						ForksConnection    struct{ TotalCount int }
					}
				}
			}
		}
		before := api.db.Statements()
		api.mustDo(query, &out, nil)
		require.Len(t, out.Sessions.Edges, n+2)
		require.Equal(t, 6, out.Sessions.Edges[0].Node.MessagesConnection.TotalCount)
		require.Len(t, out.Sessions.Edges[0].Node.MessagesConnection.Edges, 3)
		require.Equal(t, 1, out.Sessions.Edges[0].Node.ForksConnection.TotalCount)
		return api.db.Statements() - before
	}
	five, forty := measure(5), measure(40)
	require.Equal(t, five, forty, "statements for 5 and 40 sessions")
	t.Logf("%d statements for a page of sessions with three connections each", five)

	depth := func(n int) int64 {
		api := newTestAPI(t, apiOptions{engine: noBackground})
		api.seedSession("w", "c0", 2, "")
		ctx := context.Background()
		session, through := "c0", "c0-t2"
		for i := 1; i <= n; i++ {
			op, err := api.engine.Reader().GetOperation(ctx, "w", api.forkAndCommit("w", session, through, fmt.Sprintf("f%d", i)))
			require.NoError(t, err)
			session = op.TargetSessionID
			through = fmt.Sprintf("c%d-t", i)
			api.seedTurn("w", session, through, forkengine.PhaseSettled)
		}
		var out struct {
			Session struct{ MessagesConnection countedPage }
		}
		before := api.db.Statements()
		api.mustDo(`query($id: ID!) { session(workspaceId: "w", id: $id) { messagesConnection(last: 5) { totalCount `+pageFields+` } } }`,
			&out, map[string]any{"id": session})
		require.Equal(t, 4+2*n, out.Session.MessagesConnection.TotalCount)
		require.Len(t, out.Session.MessagesConnection.Edges, 5)
		return api.db.Statements() - before
	}
	require.Equal(t, depth(1), depth(20), "statements for a fork 1 and 20 deep")
}

// TestDeprecatedListsRefuseLongLists: Session.messages and Turn.messages refuse more than
// MaxListLength messages with list_too_long, and the connection pages them all.
func TestDeprecatedListsRefuseLongLists(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "long", 1, "")
	ctx := context.Background()
	in := forkengine.MessageAppend{WorkspaceID: "w", SessionID: "long", TurnID: "long-t1"}
	for i := range resolvers.MaxListLength - 1 { // with the turn's two: one more than the cap
		in.Messages = append(in.Messages, forkengine.MessageInput{ID: fmt.Sprintf("m%04d", i), Role: forkengine.RoleUser, Content: "x"})
	}
	_, err := api.engine.AppendMessages(ctx, in)
	require.NoError(t, err)
	for _, q := range []string{
		`{ session(workspaceId: "w", id: "long") { messages { localId } } }`,
		`{ session(workspaceId: "w", id: "long") { latestTurn { messages { localId } } } }`,
	} {
		e := api.with(t).expectCode("BAD_USER_INPUT", q, nil)
		require.Equal(t, resolvers.ReasonListTooLong, e.Extensions["reason"], q)
		require.Contains(t, e.Message, "Connection")
	}
	var out struct {
		Session struct {
			MessagesConnection countedPage
			LatestTurn         struct{ MessagesConnection countedPage }
		}
	}
	api.mustDo(`{ session(workspaceId: "w", id: "long") { messagesConnection(last: 1) { totalCount `+pageFields+` }
		latestTurn { messagesConnection(first: 200) { totalCount `+pageFields+` } } } }`, &out, nil)
	require.Equal(t, resolvers.MaxListLength+1, out.Session.MessagesConnection.TotalCount)
	require.Equal(t, "m0998", out.Session.MessagesConnection.Edges[0].Node.LocalID)
	require.Len(t, out.Session.LatestTurn.MessagesConnection.Edges, 200)
	require.True(t, out.Session.LatestTurn.MessagesConnection.PageInfo.HasNextPage)
}

// TestDeprecatedTurnMessagesReadsNoFurtherThanItsCap: Turn.messages refuses a turn of more than
// MaxListLength messages having read one more than the cap, not the whole turn (a turn of
// 3,000 messages read all 3,000 before answering list_too_long), whether it reads whole messages
// or their text alone.
func TestDeprecatedTurnMessagesReadsNoFurtherThanItsCap(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "huge", 1, "")
	ctx := context.Background()
	const total = 3 * resolvers.MaxListLength
	for start := 0; start < total; start += 500 {
		in := forkengine.MessageAppend{WorkspaceID: "w", SessionID: "huge", TurnID: "huge-t1"}
		for i := start; i < start+500; i++ {
			in.Messages = append(in.Messages, forkengine.MessageInput{ID: fmt.Sprintf("m%05d", i), Role: forkengine.RoleUser, Content: "x"})
		}
		_, err := api.engine.AppendMessages(ctx, in)
		require.NoError(t, err)
	}
	// The whole messages, and their role and content alone (the narrow read).
	for _, q := range []string{`{ session(workspaceId: "w", id: "huge") { latestTurn { messages { localId } } } }`,
		`{ session(workspaceId: "w", id: "huge") { latestTurn { messages { role content } } } }`} {
		before := api.db.RowsRead()
		e := api.with(t).expectCode("BAD_USER_INPUT", q, nil)
		rows := api.db.RowsRead() - before
		require.Equal(t, resolvers.ReasonListTooLong, e.Extensions["reason"], q)
		// The cap and one, the session and its latest turn, and a few rows of the response's other
		// reads; the whole turn would be 3,002.
		require.GreaterOrEqual(t, rows, int64(resolvers.MaxListLength+1), q)
		require.Less(t, rows, int64(resolvers.MaxListLength+20), "rows read by %s to refuse a turn of %d messages", q, total+2)
	}

	var out struct {
		Session struct {
			LatestTurn struct{ Messages []struct{ LocalID string } }
		}
	}
	api.seedSession("w", "small", 2, "")
	api.mustDo(`{ session(workspaceId: "w", id: "small") { latestTurn { messages { localId } } } }`, &out, nil)
	require.Len(t, out.Session.LatestTurn.Messages, 2, "a turn under the cap is listed whole")
}

// TestListConnectionsCountInTheComplexityLimit: a connection costs its page size times its
// selection, so 200 sessions × 200 messages each is refused before anything is read, and the
// same document with pages of 10 is not.
func TestListConnectionsCountInTheComplexityLimit(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s", 1, "")
	for _, field := range []string{"messagesConnection", "forksConnection"} {
		node := "localId role content"
		if field == "forksConnection" {
			node = "targetSessionId sourceTurnId targetTurnId"
		}
		q := func(n int) string {
			return fmt.Sprintf(`{ sessions(workspaceId: "w", first: 200) { edges { node { %s(first: %d) { edges { node { %s } } } } } } }`, field, n, node)
		}
		before := api.db.Statements()
		api.with(t).expectCode("COMPLEXITY_LIMIT_EXCEEDED", q(200), nil)
		require.Equal(t, before, api.db.Statements(), "refused before any read")
		api.mustDo(q(10), &struct{}{}, nil)
	}
	api.with(t).expectCode("COMPLEXITY_LIMIT_EXCEEDED", `{ sessions(workspaceId: "w", first: 200) { edges { node {
		turns(first: 200) { edges { node { messagesConnection(first: 10) { edges { node { localId } } } } } } } } } }`, nil)
}
