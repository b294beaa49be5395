package limits

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// IntrospectionRule refuses introspection that re-enters a type's member lists
// (`fields { type { fields { ... } } }`), which multiplies the response by the schema's size at
// every level, before any resolver runs. Depth, size and the introspection depth were bounded
// before validation by the Document rule, so this walk, which expands fragments, is bounded too.
// Error: COMPLEXITY_LIMIT_EXCEEDED with reason introspection_limit.
type IntrospectionRule struct{}

// introspectionDepth bounds introspection selections; the standard query needs 15.
const introspectionDepth = 24

// introspectionMembers are the introspection fields that fan out into a type's members.
var introspectionMembers = map[string]bool{
	"types": true, "fields": true, "inputFields": true, "interfaces": true, "possibleTypes": true,
	"enumValues": true, "args": true, "directives": true,
}

var (
	_ graphql.HandlerExtension        = IntrospectionRule{}
	_ graphql.OperationContextMutator = IntrospectionRule{}
)

// ExtensionName names the extension to gqlgen.
func (IntrospectionRule) ExtensionName() string { return "IntrospectionRule" }

// Validate accepts every schema: the rule needs nothing of it.
func (IntrospectionRule) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses a validated operation whose introspection re-enters a member list.
func (IntrospectionRule) MutateOperationContext(_ context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
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
