package resolvers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/limits"
)

const searchPageQuery = `query($search: String, $first: Int, $after: String, $last: Int, $before: String, $filter: SessionFilter) {
  sessions(workspaceId: "w", search: $search, first: $first, after: $after, last: $last, before: $before, filter: $filter) {
    totalCount ` + pageFields + ` } }`

type searchPage struct {
	TotalCount int
	relayPage
}

func (a *testAPI) say(sessionID, turnID string, texts ...string) {
	a.t.Helper()
	in := forkengine.MessageAppend{WorkspaceID: "w", SessionID: sessionID, TurnID: turnID}
	for _, text := range texts {
		in.Messages = append(in.Messages, forkengine.MessageInput{Role: forkengine.RoleUser, Content: text})
	}
	_, err := a.engine.AppendMessages(context.Background(), in)
	require.NoError(a.t, err)
}

// TestSessionsSearch: search finds by title and message words, pages forward and backward with
// the list's cursors scoped to the search, counts what it pages, and combines with the filter.
func TestSessionsSearch(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	for i := range 7 {
		id := fmt.Sprintf("s%d", i)
		api.seedSession("w", id, 1, "")
		if i%2 == 1 {
			api.say(id, id+"-t1", "The Kraken wakes")
		}
	}
	api.reportTitle("w", "s4", "Kraken sightings")
	page := func(vars map[string]any) searchPage {
		var out struct{ Sessions searchPage }
		api.mustDo(searchPageQuery, &out, vars)
		return out.Sessions
	}
	first := page(map[string]any{"search": "kraken", "first": 2})
	require.Equal(t, 4, first.TotalCount)
	require.Equal(t, pageShape{[]string{"s1", "s3"}, true, false}, first.shape(t))
	second := page(map[string]any{"search": "KRAKEN!", "first": 2, "after": *first.PageInfo.EndCursor})
	require.Equal(t, pageShape{[]string{"s4", "s5"}, false, true}, second.shape(t), "another spelling of the same words is the same search")
	last := page(map[string]any{"search": "kraken", "last": 3})
	require.Equal(t, pageShape{[]string{"s3", "s4", "s5"}, false, true}, last.shape(t))
	both := page(map[string]any{"search": "wakes kraken"})
	require.Equal(t, 3, both.TotalCount)
	noSearch := page(map[string]any{"search": "   "})
	require.Equal(t, 7, noSearch.TotalCount, "a blank search is no search")

	// The filter applies to the search; its count is the filtered one.
	api.mustDo(`mutation { deleteSession(workspaceId: "w", id: "s3") }`, nil, nil)
	require.Equal(t, 3, page(map[string]any{"search": "kraken"}).TotalCount)
	withDeleted := page(map[string]any{"search": "kraken", "filter": map[string]any{"includeDeleted": true}})
	require.Equal(t, 4, withDeleted.TotalCount)
	require.Len(t, withDeleted.Edges, 4)

	// A cursor belongs to its search, as it belongs to its filter.
	err := api.expectCode("BAD_USER_INPUT", searchPageQuery, map[string]any{"search": "wakes", "after": *first.PageInfo.EndCursor})
	require.Equal(t, "invalid_cursor", err.Extensions["reason"])
	err = api.expectCode("BAD_USER_INPUT", searchPageQuery, map[string]any{"after": *first.PageInfo.EndCursor})
	require.Equal(t, "invalid_cursor", err.Extensions["reason"])
}

// TestSessionsSearchRefusals: a search that cannot be looked up is refused with reason
// invalid_search, and changes nothing.
func TestSessionsSearchRefusals(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("w", "s0", 1, "")
	events := len(api.eventsOf("w"))
	before := api.db.Statements()
	for name, search := range map[string]string{
		"only punctuation": "?!--",
		"too long":         strings.Repeat("a", forkengine.MaxSearchLength+1),
		"too many words":   "a b c d e f g h i",
		"NUL":              "kraken\x00",
	} {
		t.Run(name, func(t *testing.T) {
			err := api.with(t).expectCode("BAD_USER_INPUT", searchPageQuery, map[string]any{"search": search})
			require.Equal(t, "invalid_search", err.Extensions["reason"], "%+v", err)
		})
	}
	require.Equal(t, before, api.db.Statements(), "a refused search reads nothing")
	require.Len(t, api.eventsOf("w"), events, "and writes nothing")
}

// TestSessionsSearchCost: a search adds SearchComplexity to its field, so a document of wide
// search pages reaches the complexity limit that the same pages without a search stay under.
func TestSessionsSearchCost(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	doc := func(search bool) string {
		var q strings.Builder
		q.WriteString("{")
		for i := range limits.DefaultRootFieldLimit {
			arg := ""
			if search {
				arg = fmt.Sprintf(`, search: "word%d"`, i)
			}
			fmt.Fprintf(&q, ` s%d: sessions(workspaceId: "w", first: 200%s) { totalCount edges { node { id localId title kind provider model cwd createdAt updatedAt } } }`, i, arg)
		}
		return q.String() + " }"
	}
	api.mustDo(doc(false), nil, nil)
	api.expectCode(limits.CodeComplexityLimit, doc(true), nil)
}
