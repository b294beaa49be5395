package resolvers_test

import (
	"fmt"
	"strings"
)

// The document shapes of issue 10's attack campaign.

// fragmentBomb spreads each of n fragments twice from the one before: 2^n fields once expanded,
// in a document of about 60n bytes.
func fragmentBomb(n int) string { return fragmentBombIn("{ ...F0 }", "Query", n) }

// sessionFragmentBomb is a fragmentBomb inside one session, so its fields are not root fields.
func sessionFragmentBomb(n int) string {
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

// aliasFlood aliases __typename n times in one session (50,000 made 939 KB).
func aliasFlood(n int) string {
	var b strings.Builder
	b.WriteString(`{ session(workspaceId: "w", id: "s") {`)
	for i := range n {
		fmt.Fprintf(&b, " a%d: __typename", i)
	}
	b.WriteString(" } }")
	return b.String()
}

// sameNameFlood repeats __typename n times without aliases: every pair overlaps by name.
func sameNameFlood(n int) string {
	return "{" + strings.Repeat(" __typename", n) + " }"
}

// introspectionFlood aliases a full type introspection n times.
func introspectionFlood(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " i%d: __schema { types { name fields { name type { name } } } }", i)
	}
	b.WriteString(" }")
	return b.String()
}

// directiveFlood puts n @include directives on one field.
func directiveFlood(n int) string {
	return "{ __typename" + strings.Repeat(" @include(if: true)", n) + " }"
}

// nested selects a session's forks and their targets, depth fields deep from the root.
func nested(depth int) string {
	below := depth - 1 // fields under session
	leaf := "id"
	if below%2 == 0 {
		leaf, below = "forks { id }", below-1
	}
	pairs := (below - 1) / 2
	return `{ session(workspaceId: "w", id: "s") { ` + strings.Repeat("forks { targetSession { ", pairs) + leaf +
		strings.Repeat(" } }", pairs) + " } }"
}

// nestedSameName repeats id n times inside one session: under the field limit, every pair of
// fields overlaps by name, which validation compares pairwise.
func nestedSameName(n int) string {
	return `{ session(workspaceId: "w", id: "s") {` + strings.Repeat(" id", n) + " } }"
}

// nestedFragmentsSameName repeats id and forks { operationId } n times in a fragment spread into one
// session: pairs of fields with selections, which validation compares recursively.
func nestedFragmentsSameName(n int) string {
	return `{ session(workspaceId: "w", id: "s") { ...A } } fragment A on Session {` + strings.Repeat(" id forks { operationId }", n) + " }"
}

// manyFragments spreads n fragments that each select id, __typename and title into one session, as a
// component tree of Relay or Apollo fragments does.
func manyFragments(n int) string {
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
