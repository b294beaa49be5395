package limitstest

import (
	"fmt"
	"strings"
)

// The document shapes of issue 10's attack campaign.

// FragmentBomb spreads each of n fragments twice from the one before: 2^n fields once expanded,
// in a document of about 60n bytes.
func FragmentBomb(n int) string { return fragmentBombIn("{ ...F0 }", "Query", n) }

// SessionFragmentBomb is a FragmentBomb inside one session, so its fields are not root fields.
func SessionFragmentBomb(n int) string {
	return fragmentBombIn(`{ session(workspaceId: "w", id: "s") { ...F0 } }`, "Session", n)
}

func fragmentBombIn(operation, on string, n int) string {
	var b strings.Builder
	b.WriteString(operation)
	for i := range n {
		fmt.Fprintf(&b, " fragment F%d on %s { a%d: __typename ...F%d ...F%d }", i, on, i, i+1, i+1)
	}
	fmt.Fprintf(&b, " fragment F%d on %s { __typename }", n, on)
	return b.String()
}

// AliasFlood aliases __typename n times in one session (50,000 made 939 KB).
func AliasFlood(n int) string {
	var b strings.Builder
	b.WriteString(`{ session(workspaceId: "w", id: "s") {`)
	for i := range n {
		fmt.Fprintf(&b, " a%d: __typename", i)
	}
	b.WriteString(" } }")
	return b.String()
}

// SameNameFlood repeats __typename n times without aliases: every pair overlaps by name.
func SameNameFlood(n int) string {
	return "{" + strings.Repeat(" __typename", n) + " }"
}

// IntrospectionFlood aliases a full type introspection n times.
func IntrospectionFlood(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " i%d: __schema { types { name fields { name type { name } } } }", i)
	}
	b.WriteString(" }")
	return b.String()
}

// DirectiveFlood puts n @include directives on one field.
func DirectiveFlood(n int) string {
	return "{ __typename" + strings.Repeat(" @include(if: true)", n) + " }"
}

// Nested selects a session's forks and their targets, depth fields deep from the root.
func Nested(depth int) string {
	below := depth - 1 // fields under session
	leaf := "id"
	if below%2 == 0 {
		leaf, below = "forks { id }", below-1
	}
	pairs := (below - 1) / 2
	return `{ session(workspaceId: "w", id: "s") { ` + strings.Repeat("forks { targetSession { ", pairs) + leaf +
		strings.Repeat(" } }", pairs) + " } }"
}

// NestedSameName repeats id n times inside one session: under the field limit, every pair of
// fields overlaps by name, which validation compares pairwise.
func NestedSameName(n int) string {
	return `{ session(workspaceId: "w", id: "s") {` + strings.Repeat(" id", n) + " } }"
}

// NestedFragmentsSameName repeats id and forks { operationId } n times in a fragment spread into one
// session: pairs of fields with selections, which validation compares recursively.
func NestedFragmentsSameName(n int) string {
	return `{ session(workspaceId: "w", id: "s") { ...A } } fragment A on Session {` + strings.Repeat(" id forks { operationId }", n) + " }"
}

// ManyFragments spreads n fragments that each select id, __typename and title into one session, as a
// component tree of Relay or Apollo fragments does.
func ManyFragments(n int) string {
	var b strings.Builder
	b.WriteString(`{ session(workspaceId: "w", id: "s") {`)
	for i := range n {
		fmt.Fprintf(&b, " ...F%d", i)
	}
	b.WriteString(" } }")
	for i := range n {
		fmt.Fprintf(&b, " fragment F%d on Session { id __typename title }", i)
	}
	return b.String()
}
