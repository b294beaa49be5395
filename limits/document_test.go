package limits_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/limits"
	"github.com/forkgraph/forkgraph/limits/limitstest"
)

func TestCheckDocument(t *testing.T) {
	noOverlapLimit := limits.Document{Overlaps: 1 << 30}
	// Cases that need other limits than the defaults.
	limitsOf := map[string]limits.Document{"OK: a fragment bomb of 9 levels (1,024 fields)": noOverlapLimit}
	cases := []struct {
		name, query, code, reason string
	}{
		{"OK: the standard introspection query", limitstest.StandardIntrospection, "", ""},
		{"OK: a fragment bomb of 9 levels (1,024 fields)", limitstest.SessionFragmentBomb(9), "", ""},
		{"ErrOverlapLimit: a fragment bomb of 9 levels repeats __typename", limitstest.SessionFragmentBomb(9), limits.CodeComplexityLimit, "overlap_limit"},
		{"ErrFieldLimit: a fragment bomb of 10 levels (2,048 fields)", limitstest.SessionFragmentBomb(10), limits.CodeComplexityLimit, "field_limit"},
		{"ErrFieldLimit: a fragment bomb of 90 levels saturates", limitstest.SessionFragmentBomb(90), limits.CodeComplexityLimit, "field_limit"},
		{"ErrRootFieldLimit: a fragment bomb at the root", limitstest.FragmentBomb(5), limits.CodeRootFieldLimit, ""},
		{"OK: 100 aliases", limitstest.AliasFlood(100), "", ""},
		{"ErrAliasLimit: 101 aliases", limitstest.AliasFlood(101), limits.CodeAliasLimit, ""},
		{"ErrFieldLimit: one name 2,001 times", limitstest.SameNameFlood(2001), limits.CodeComplexityLimit, "field_limit"},
		{"OK: 5 introspections", limitstest.IntrospectionFlood(5), "", ""},
		{"ErrIntrospectionLimit: 6 introspections", limitstest.IntrospectionFlood(6), limits.CodeComplexityLimit, "introspection_limit"},
		{"OK: 50 directives", limitstest.DirectiveFlood(50), "", ""},
		{"ErrDirectiveLimit: 51 directives", limitstest.DirectiveFlood(51), limits.CodeDirectiveLimit, ""},
		{"OK: 20 root fields", limitstest.SameNameFlood(20), "", ""},
		{"ErrRootFieldLimit: 21 root fields", limitstest.SameNameFlood(21), limits.CodeRootFieldLimit, ""},
		{"ErrRootFieldLimit: root fields spread from fragments count",
			"{ ...A ...A } fragment A on Query { " + strings.Repeat("__typename ", 11) + "}", limits.CodeRootFieldLimit, ""},
		{"ErrTokenLimit: 10,001 tokens", "{" + strings.Repeat(" __typename", 9999) + " }", limits.CodeTokenLimit, ""},
		{"OK: depth exactly at the limit", limitstest.Nested(limits.DefaultDepthLimit), "", ""},
		{"ErrDepthLimit: one level past the limit", limitstest.Nested(limits.DefaultDepthLimit + 1), limits.CodeComplexityLimit, "depth_limit"},
		{"ErrDepthLimit: depth through a fragment counts where it is spread",
			`{ session(workspaceId: "w", id: "s") { ...D } } fragment D on Session { forks { targetSession { ` +
				strings.Repeat("forks { targetSession { ", 5) + "id" + strings.Repeat(" } }", 6) + " }",
			limits.CodeComplexityLimit, "depth_limit"},
		{"OK: introspection may be deeper than ordinary fields",
			`{ __type(name: "Session") { ` + strings.Repeat("ofType { ", 20) + "name" + strings.Repeat(" }", 20) + " } }", "", ""},
		{"ErrIntrospectionTooDeep", `{ __type(name: "Session") { ` + strings.Repeat("ofType { ", 24) + "name" + strings.Repeat(" }", 24) + " } }",
			limits.CodeComplexityLimit, "introspection_limit"},
		{"OK: 141 fields of one name in a set (9,870 pairs)", limitstest.NestedSameName(141), "", ""},
		{"ErrOverlapLimit: 142 fields of one name in a set (10,011 pairs)", limitstest.NestedSameName(142), limits.CodeComplexityLimit, "overlap_limit"},
		{"ErrOverlapLimit: names spread from fragments count in the set they are spread in",
			limitstest.NestedFragmentsSameName(150), limits.CodeComplexityLimit, "overlap_limit"},
		{"ErrOverlapLimit: two fragments of the same names",
			`{ session(workspaceId: "w", id: "s") { ...A ...B } } fragment A on Session {` + strings.Repeat(" id", 100) +
				" } fragment B on Session {" + strings.Repeat(" id", 100) + " }", limits.CodeComplexityLimit, "overlap_limit"},
		{"OK: 80 fragments each with id, __typename and title in one set", limitstest.ManyFragments(80), "", ""},
		{"ErrOverlapLimit: 90 such fragments", limitstest.ManyFragments(90), limits.CodeComplexityLimit, "overlap_limit"},
		{"OK: a fragment cycle is left to validation", "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }", "", ""},
		{"OK: a parse error is left to the parser", "{ sessions(", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := limitstest.Check(t, tc.query, limitsOf[tc.name])
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
			require.Nil(t, limitstest.Check(t, limitstest.Nested(limit), limits.Document{Depth: limit}))
			err := limitstest.Check(t, limitstest.Nested(limit+1), limits.Document{Depth: limit})
			require.NotNil(t, err)
			require.Equal(t, "depth_limit", err.Extensions["reason"])
		})
	}
}
