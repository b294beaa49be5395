package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Issue 10's reproductions: ids are never trimmed, so a padded id is refused on reads and
// writes alike instead of overwriting the unpadded row (writes) or finding nothing (reads).
func TestPaddedIDsAreRefusedEverywhere(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	api.seedSession("demo", "billing-refactor", 1, "")
	cases := []struct{ name, query string }{
		{"write: session id with a leading space",
			`mutation { reportSession(input: {workspaceId: "demo", id: " billing-refactor", provider: "simulated", title: "hijacked"}) { id } }`},
		{"write: workspace with a trailing space",
			`mutation { reportSession(input: {workspaceId: "demo ", id: "billing-refactor", provider: "simulated", title: "hijacked"}) { id } }`},
		{"write: provider with a NUL", `mutation { reportSession(input: {workspaceId: "demo", id: "n", provider: "sim\u0000"}) { id } }`},
		{"write: provider with an ANSI escape", `mutation { reportSession(input: {workspaceId: "demo", id: "n", provider: "\u001b[31msim"}) { id } }`},
		{"write: model padded", `mutation { reportSession(input: {workspaceId: "demo", id: "n", provider: "simulated", model: "m "}) { id } }`},
		{"write: delete with a padded id", `mutation { deleteSession(workspaceId: "demo", id: "billing-refactor ") }`},
		{"read: session id with a leading space", `{ session(workspaceId: "demo", id: " billing-refactor") { id } }`},
		{"read: workspace with a trailing space", `{ sessions(workspaceId: "demo ") { totalCount } }`},
		{"read: fork operation id with a tab", `{ forkOperation(workspaceId: "demo", id: "op\t") { id } }`},
		{"read: workspace with a non-breaking space", "{ workspaceEventCursor(workspaceId: \"demo\u00a0\") }"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := api.with(t).expectCode("BAD_USER_INPUT", tc.query, nil)
			require.Equal(t, forkengine.ReasonInvalidID, e.Extensions["reason"], "%+v", e)
		})
	}
	var got struct {
		Sessions struct{ TotalCount int }
		Session  struct{ Title string }
	}
	api.mustDo(`{ sessions(workspaceId: "demo") { totalCount } session(workspaceId: "demo", id: "billing-refactor") { title } }`, &got, nil)
	require.Equal(t, 1, got.Sessions.TotalCount, "nothing was written")
	require.Equal(t, "Title of billing-refactor", got.Session.Title, "the unpadded session was not overwritten")
}
