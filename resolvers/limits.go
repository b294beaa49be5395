package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/graph"
	"github.com/forkgraph/forkgraph/models"
)

// Default limits of one operation.
const (
	DefaultComplexityLimit = 50_000
	DefaultDepthLimit      = 12
)

// pageComplexity makes a list cost its page size times its children, so a request's cost follows
// the number of rows it can return.
func pageComplexity(childComplexity int, first *int) int {
	size := models.DefaultPageSize
	if first != nil && *first > 0 {
		size = min(*first, models.MaxPageSize)
	}
	return 1 + size*childComplexity
}

func connectionComplexity(c *graph.ComplexityRoot) {
	c.Query.Sessions = func(child int, _ string, first *int, _ *string, _ *models.SessionFilter) int {
		return pageComplexity(child, first)
	}
	c.Query.ForkOperations = func(child int, _ string, first *int, _ *string, _ *models.ForkOperationFilter) int {
		return pageComplexity(child, first)
	}
	c.Session.Turns = func(child int, first *int, _ *string) int { return pageComplexity(child, first) }
}

// depthLimit rejects operations nested deeper than max fields (fragments included), before any
// resolver runs. Introspection (`__schema`, `__type`) is measured by its own rule instead: the
// standard introspection query of graphql-js, Apollo and GraphiQL is about 15 fields deep (the
// `ofType` chain), which is harmless, while what makes introspection expensive is re-entering a
// type's member lists (`fields { type { fields { ... } } }`), which multiplies the response by the
// schema's size at every level. So inside introspection the depth may reach introspectionDepth,
// and each member list may appear at most once on a path. Errors: COMPLEXITY_LIMIT_EXCEEDED with
// reason depth_limit or introspection_limit.
type depthLimit struct{ max int }

// introspectionDepth bounds introspection selections; the standard query needs 15.
const introspectionDepth = 24

// introspectionMembers are the introspection fields that fan out into a type's members.
var introspectionMembers = map[string]bool{
	"types": true, "fields": true, "inputFields": true, "interfaces": true, "possibleTypes": true,
	"enumValues": true, "args": true, "directives": true,
}

var (
	_ graphql.HandlerExtension        = depthLimit{}
	_ graphql.OperationContextMutator = depthLimit{}
)

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	w := depthWalk{limit: d.max}
	w.walk(opCtx.Operation.SelectionSet, 0, nil)
	switch {
	case w.repeatedMember != "":
		return limitError("introspection_limit",
			"introspection re-enters %q inside itself; select each member list at most once per path", w.repeatedMember)
	case w.introspectionTooDeep:
		return limitError("introspection_limit", "introspection is nested deeper than the limit of %d fields", introspectionDepth)
	case w.deepest > d.max:
		return limitError("depth_limit", "operation is nested deeper than the limit of %d fields", d.max)
	}
	return nil
}

func limitError(reason, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": "COMPLEXITY_LIMIT_EXCEEDED", "reason": reason}
	return err
}

// depthWalk measures an operation. It stops descending once a limit is passed, so a fragment
// cycle (which validation rejects anyway) cannot loop.
type depthWalk struct {
	limit                int
	deepest              int // deepest field outside introspection
	introspectionTooDeep bool
	repeatedMember       string
}

// walk visits set at depth; members is nil outside introspection and holds the member lists
// already on the path inside it.
func (w *depthWalk) walk(set ast.SelectionSet, depth int, members map[string]bool) {
	if depth > w.limit && members == nil || depth > introspectionDepth || w.repeatedMember != "" {
		return
	}
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			w.field(s, depth+1, members)
		case *ast.InlineFragment:
			w.walk(s.SelectionSet, depth, members)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				w.walk(s.Definition.SelectionSet, depth, members)
			}
		}
	}
}

func (w *depthWalk) field(f *ast.Field, depth int, members map[string]bool) {
	if members == nil && (f.Name == "__schema" || f.Name == "__type") {
		members = map[string]bool{}
	}
	if members == nil {
		w.deepest = max(w.deepest, depth)
		w.walk(f.SelectionSet, depth, nil)
		return
	}
	if depth > introspectionDepth {
		w.introspectionTooDeep = true
		return
	}
	if introspectionMembers[f.Name] {
		if members[f.Name] {
			w.repeatedMember = f.Name
			return
		}
		members = withMember(members, f.Name)
	}
	w.walk(f.SelectionSet, depth, members)
}

// withMember returns a copy of members plus name, so sibling paths do not see each other's lists.
func withMember(members map[string]bool, name string) map[string]bool {
	next := make(map[string]bool, len(members)+1)
	for k := range members {
		next[k] = true
	}
	next[name] = true
	return next
}
