package resolvers_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/limits"
	"github.com/forkgraph/forkgraph/limits/limitstest"
)

// TestBombsAreRefusedBeforeExecution sends the campaign's documents to the server, with a
// mutation among them, and checks that each is refused with its code and that nothing was
// written.
func TestBombsAreRefusedBeforeExecution(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	report := func(i int) string {
		return fmt.Sprintf(` r%d: reportSession(input: {workspaceId: "w", id: "bomb-%d", provider: "simulated"}) { id }`, i, i)
	}
	var mutation strings.Builder
	mutation.WriteString("mutation {")
	for i := range 101 {
		mutation.WriteString(report(i))
	}
	mutation.WriteString(" }")
	bombMutation := "mutation { ...M } fragment M on Mutation {" + report(0) + " ...F0 }" +
		strings.TrimPrefix(limitstest.FragmentBomb(30), "{ ...F0 }")
	bombMutation = strings.ReplaceAll(bombMutation, "on Query", "on Mutation")
	cases := []struct{ name, query, code string }{
		{"fragment bomb of 30 levels", limitstest.FragmentBomb(30), limits.CodeComplexityLimit},
		{"50,000 aliases", limitstest.AliasFlood(50_000), limits.CodeTokenLimit},
		{"3,000 aliased introspections", limitstest.IntrospectionFlood(3000), limits.CodeTokenLimit},
		{"101 aliased writes", mutation.String(), limits.CodeAliasLimit},
		{"a write inside a fragment bomb", bombMutation, limits.CodeComplexityLimit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The server runs the same check in the request: bound it first, so a walk that is
			// not linear fails here in seconds instead of holding the request for ever.
			require.NotNil(t, limitstest.Check(t, tc.query, limits.Document{}))
			api.with(t).expectCode(tc.code, tc.query, nil)
		})
	}
	var count struct{ Sessions struct{ TotalCount int } }
	api.mustDo(`{ sessions(workspaceId: "w") { totalCount } }`, &count, nil)
	require.Zero(t, count.Sessions.TotalCount, "a refused document wrote sessions")
}
