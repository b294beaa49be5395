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

// pageComplexity makes a list cost its page size (`first`, else `last`) times its children, so a
// request's cost follows the number of rows it can return.
func pageComplexity(childComplexity int, first, last *int) int {
	size := models.DefaultPageSize
	for _, n := range []*int{last, first} {
		if n != nil && *n >= 0 {
			size = min(*n, models.MaxPageSize)
		}
	}
	return 1 + size*childComplexity
}

// SearchComplexity is what a search adds to its sessions field: it reads an index per word and
// walks the rarest word's rows, so twenty searches in one document (the root field limit) cost
// 20,000 of the 50,000 a document may spend, and aliases cannot fan one out past that.
const SearchComplexity = 1_000

func connectionComplexity(c *graph.ComplexityRoot) {
	c.Query.Sessions = func(child int, _ string, first *int, _ *string, last *int, _ *string, _ *models.SessionFilter, search *string) int {
		cost := pageComplexity(child, first, last)
		if search != nil && *search != "" {
			cost += SearchComplexity
		}
		return cost
	}
	c.Query.ForkOperations = func(child int, _ string, first *int, _ *string, last *int, _ *string, _ *models.ForkOperationFilter) int {
		return pageComplexity(child, first, last)
	}
	c.Session.Turns = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	c.Session.MessagesConnection = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	c.Session.ForksConnection = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	c.Turn.MessagesConnection = func(child int, first *int, _ *string, last *int, _ *string) int {
		return pageComplexity(child, first, last)
	}
	// nodes is a list of as many objects as it has ids.
	c.Query.Nodes = func(child int, ids []string) int { return 1 + min(len(ids), MaxNodeIDs)*child }
}

// introspectionRule refuses introspection that re-enters a type's member lists
// (`fields { type { fields { ... } } }`), which multiplies the response by the schema's size at
// every level, before any resolver runs. Depth, size and the introspection depth were bounded
// before validation by DocumentLimits, so this walk, which expands fragments, is bounded too.
// Error: COMPLEXITY_LIMIT_EXCEEDED with reason introspection_limit.
type introspectionRule struct{}

// introspectionDepth bounds introspection selections; the standard query needs 15.
const introspectionDepth = 24

// introspectionMembers are the introspection fields that fan out into a type's members.
var introspectionMembers = map[string]bool{
	"types": true, "fields": true, "inputFields": true, "interfaces": true, "possibleTypes": true,
	"enumValues": true, "args": true, "directives": true,
}

var (
	_ graphql.HandlerExtension        = introspectionRule{}
	_ graphql.OperationContextMutator = introspectionRule{}
)

// ExtensionName and Validate make introspectionRule a gqlgen extension.
func (introspectionRule) ExtensionName() string                   { return "IntrospectionRule" }
func (introspectionRule) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses a validated operation whose introspection re-enters a member list.
func (introspectionRule) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	var w memberWalk
	w.walk(opCtx.Operation.SelectionSet, nil)
	if w.repeated != "" {
		return codedError(CodeComplexityLimit, "introspection_limit",
			"introspection re-enters %q inside itself; select each member list at most once per path", w.repeated)
	}
	return nil
}

// memberWalk looks for a member list selected inside itself.
type memberWalk struct{ repeated string }

// walk visits set; members is nil outside introspection and holds the member lists already on
// the path inside it.
func (w *memberWalk) walk(set ast.SelectionSet, members map[string]bool) {
	for _, sel := range set {
		if w.repeated != "" {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			w.field(s, members)
		case *ast.InlineFragment:
			w.walk(s.SelectionSet, members)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				w.walk(s.Definition.SelectionSet, members)
			}
		}
	}
}

func (w *memberWalk) field(f *ast.Field, members map[string]bool) {
	if members == nil && (f.Name == "__schema" || f.Name == "__type") {
		members = map[string]bool{}
	}
	if members != nil && introspectionMembers[f.Name] {
		if members[f.Name] {
			w.repeated = f.Name
			return
		}
		members = withMember(members, f.Name)
	}
	w.walk(f.SelectionSet, members)
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
