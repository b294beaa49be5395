package resolvers_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/resolvers"
)

// costWalkBound is how long a check of the documents below may take. The walk is linear in the
// document (each fragment measured once, its cost memoized), so microseconds to milliseconds;
// one that expands a fragment bomb instead (issue 21's mutant: the memo not read) takes 2^n
// steps, and without a bound ran until the test binary's timeout, ten minutes on.
const costWalkBound = 10 * time.Second

// checkDocument is resolvers.CheckDocument, failing the test when the check is not done within
// costWalkBound. (A walk that overruns goes on in its goroutine until the test binary ends.)
func checkDocument(t *testing.T, query string, limits resolvers.DocumentLimits) *gqlerror.Error {
	t.Helper()
	done := make(chan *gqlerror.Error, 1)
	go func() { done <- resolvers.CheckDocument(query, limits) }()
	select {
	case err := <-done:
		return err
	case <-time.After(costWalkBound):
		t.Fatalf("checking a %d-byte document took over %v: the cost walk is not linear in the document "+
			"(is each fragment measured once?)", len(query), costWalkBound)
		return nil
	}
}

func TestCheckDocument(t *testing.T) {
	noOverlapLimit := resolvers.DocumentLimits{Overlaps: 1 << 30}
	// Cases that need other limits than the defaults.
	limitsOf := map[string]resolvers.DocumentLimits{"OK: a fragment bomb of 9 levels (1,024 fields)": noOverlapLimit}
	cases := []struct {
		name, query, code, reason string
	}{
		{"OK: the standard introspection query", standardIntrospection, "", ""},
		{"OK: a fragment bomb of 9 levels (1,024 fields)", sessionFragmentBomb(9), "", ""},
		{"ErrOverlapLimit: a fragment bomb of 9 levels repeats __typename", sessionFragmentBomb(9), resolvers.CodeComplexityLimit, "overlap_limit"},
		{"ErrFieldLimit: a fragment bomb of 10 levels (2,048 fields)", sessionFragmentBomb(10), resolvers.CodeComplexityLimit, "field_limit"},
		{"ErrFieldLimit: a fragment bomb of 90 levels saturates", sessionFragmentBomb(90), resolvers.CodeComplexityLimit, "field_limit"},
		{"ErrRootFieldLimit: a fragment bomb at the root", fragmentBomb(5), resolvers.CodeRootFieldLimit, ""},
		{"OK: 100 aliases", aliasFlood(100), "", ""},
		{"ErrAliasLimit: 101 aliases", aliasFlood(101), resolvers.CodeAliasLimit, ""},
		{"ErrFieldLimit: one name 2,001 times", sameNameFlood(2001), resolvers.CodeComplexityLimit, "field_limit"},
		{"OK: 5 introspections", introspectionFlood(5), "", ""},
		{"ErrIntrospectionLimit: 6 introspections", introspectionFlood(6), resolvers.CodeComplexityLimit, "introspection_limit"},
		{"OK: 50 directives", directiveFlood(50), "", ""},
		{"ErrDirectiveLimit: 51 directives", directiveFlood(51), resolvers.CodeDirectiveLimit, ""},
		{"OK: 20 root fields", sameNameFlood(20), "", ""},
		{"ErrRootFieldLimit: 21 root fields", sameNameFlood(21), resolvers.CodeRootFieldLimit, ""},
		{"ErrRootFieldLimit: root fields spread from fragments count",
			"{ ...A ...A } fragment A on Query { " + strings.Repeat("__typename ", 11) + "}", resolvers.CodeRootFieldLimit, ""},
		{"ErrTokenLimit: 10,001 tokens", "{" + strings.Repeat(" __typename", 9999) + " }", resolvers.CodeTokenLimit, ""},
		{"OK: depth exactly at the limit", nested(resolvers.DefaultDepthLimit), "", ""},
		{"ErrDepthLimit: one level past the limit", nested(resolvers.DefaultDepthLimit + 1), resolvers.CodeComplexityLimit, "depth_limit"},
		{"ErrDepthLimit: depth through a fragment counts where it is spread",
			`{ session(workspaceId: "w", id: "s") { ...D } } fragment D on Session { forks { targetSession { ` +
				strings.Repeat("forks { targetSession { ", 5) + "id" + strings.Repeat(" } }", 6) + " }",
			resolvers.CodeComplexityLimit, "depth_limit"},
		{"OK: introspection may be deeper than ordinary fields",
			`{ __type(name: "Session") { ` + strings.Repeat("ofType { ", 20) + "name" + strings.Repeat(" }", 20) + " } }", "", ""},
		{"ErrIntrospectionTooDeep", `{ __type(name: "Session") { ` + strings.Repeat("ofType { ", 24) + "name" + strings.Repeat(" }", 24) + " } }",
			resolvers.CodeComplexityLimit, "introspection_limit"},
		{"OK: 141 fields of one name in a set (9,870 pairs)", nestedSameName(141), "", ""},
		{"ErrOverlapLimit: 142 fields of one name in a set (10,011 pairs)", nestedSameName(142), resolvers.CodeComplexityLimit, "overlap_limit"},
		{"ErrOverlapLimit: names spread from fragments count in the set they are spread in",
			nestedFragmentsSameName(150), resolvers.CodeComplexityLimit, "overlap_limit"},
		{"ErrOverlapLimit: two fragments of the same names",
			`{ session(workspaceId: "w", id: "s") { ...A ...B } } fragment A on Session {` + strings.Repeat(" id", 100) +
				" } fragment B on Session {" + strings.Repeat(" id", 100) + " }", resolvers.CodeComplexityLimit, "overlap_limit"},
		{"OK: 80 fragments each with id, __typename and title in one set", manyFragments(80), "", ""},
		{"ErrOverlapLimit: 90 such fragments", manyFragments(90), resolvers.CodeComplexityLimit, "overlap_limit"},
		{"OK: a fragment cycle is left to validation", "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", "", ""},
		{"OK: a parse error is left to the parser", "{ sessions(", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkDocument(t, tc.query, limitsOf[tc.name])
			if tc.code == "" {
				require.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			require.Equal(t, tc.code, err.Extensions["code"], err.Message)
			if tc.reason != "" {
				require.Equal(t, tc.reason, err.Extensions["reason"], err.Message)
			}
		})
	}
}

// TestDepthLimitBoundary pins the depth limit on both sides of every configured value: a
// document exactly at the limit runs, one field deeper is refused.
func TestDepthLimitBoundary(t *testing.T) {
	for _, limit := range []int{3, 4, 12} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			require.Nil(t, checkDocument(t, nested(limit), resolvers.DocumentLimits{Depth: limit}))
			err := checkDocument(t, nested(limit+1), resolvers.DocumentLimits{Depth: limit})
			require.NotNil(t, err)
			require.Equal(t, "depth_limit", err.Extensions["reason"])
		})
	}
}

// TestBombsAreRefusedBeforeExecution sends the campaign's documents to the server, with a
// mutation among them, and checks that each is refused with its code and that nothing was
// written.
func TestBombsAreRefusedBeforeExecution(t *testing.T) {
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
		strings.TrimPrefix(fragmentBomb(30), "{ ...F0 }")
	bombMutation = strings.ReplaceAll(bombMutation, "on Query", "on Mutation")
	cases := []struct{ name, query, code string }{
		{"fragment bomb of 30 levels", fragmentBomb(30), resolvers.CodeComplexityLimit},
		{"50,000 aliases", aliasFlood(50_000), resolvers.CodeTokenLimit},
		{"3,000 aliased introspections", introspectionFlood(3000), resolvers.CodeTokenLimit},
		{"101 aliased writes", mutation.String(), resolvers.CodeAliasLimit},
		{"a write inside a fragment bomb", bombMutation, resolvers.CodeComplexityLimit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The server runs the same check in the request: bound it first, so a walk that is
			// not linear fails here in seconds instead of holding the request for ever.
			require.NotNil(t, checkDocument(t, tc.query, resolvers.DocumentLimits{}))
			api.with(t).expectCode(tc.code, tc.query, nil)
		})
	}
	var count struct{ Sessions struct{ TotalCount int } }
	api.mustDo(`{ sessions(workspaceId: "w") { totalCount } }`, &count, nil)
	require.Zero(t, count.Sessions.TotalCount, "a refused document wrote sessions")
}
