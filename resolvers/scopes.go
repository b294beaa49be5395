package resolvers

import (
	"fmt"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/access"
)

// The directives that spell each root field's rule in the schema, and the line each root field's
// description ends with to say the same in words (standard introspection does not show field
// directives, so that line is how a client reading the schema sees the rule).
const (
	directiveRequiresScope = "requiresScope"
	directiveAuthenticated = "authenticated"
	authenticatedLine      = "Requires any valid credential."
)

// scopeLine is the description line of a field that needs scope.
func scopeLine(scope access.Scope) string {
	return "Requires scope " + strings.ToUpper(string(scope)) + "."
}

// fieldRule is what a root field needs: a scope, or (anyCredential) only a valid credential.
type fieldRule struct {
	scope         access.Scope
	anyCredential bool
}

// fieldKey names a root field: its object (Query, Mutation, Subscription) and name.
type fieldKey struct{ object, field string }

// rootRules is the rule of every root field, read once from the schema.
type rootRules map[fieldKey]fieldRule

// readRootRules reads @requiresScope(scope:) or @authenticated off every root field of schema.
// A root field with neither, with both, with a scope that is not one, or whose description does
// not end with the line that says its rule is an error: the server does not start, so no field
// can be added without deciding who may call it.
func readRootRules(schema *ast.Schema) (rootRules, error) {
	rules := rootRules{}
	for _, root := range []*ast.Definition{schema.Query, schema.Mutation, schema.Subscription} {
		if root == nil {
			continue
		}
		for _, f := range root.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			rule, err := ruleOf(root.Name, f)
			if err != nil {
				return nil, err
			}
			rules[fieldKey{root.Name, f.Name}] = rule
		}
	}
	return rules, nil
}

func ruleOf(object string, f *ast.FieldDefinition) (fieldRule, error) {
	scoped, authed := f.Directives.ForName(directiveRequiresScope), f.Directives.ForName(directiveAuthenticated)
	var rule fieldRule
	var line string
	switch {
	case scoped != nil && authed != nil:
		return rule, fmt.Errorf("root field %s.%s has both @%s and @%s", object, f.Name, directiveRequiresScope, directiveAuthenticated)
	case authed != nil:
		rule, line = fieldRule{anyCredential: true}, authenticatedLine
	case scoped != nil:
		arg := scoped.Arguments.ForName("scope")
		if arg == nil || arg.Value == nil {
			return rule, fmt.Errorf("root field %s.%s: @%s needs a scope", object, f.Name, directiveRequiresScope)
		}
		scope, ok := access.ParseScope(strings.ToLower(arg.Value.Raw))
		if !ok {
			return rule, fmt.Errorf("root field %s.%s: %q is not a scope", object, f.Name, arg.Value.Raw)
		}
		rule, line = fieldRule{scope: scope}, scopeLine(scope)
	default:
		return rule, fmt.Errorf("root field %s.%s has no @%s (or @%s): say which scope it needs", object, f.Name,
			directiveRequiresScope, directiveAuthenticated)
	}
	lines := strings.Split(strings.TrimSpace(f.Description), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != line {
		return rule, fmt.Errorf("root field %s.%s: its description must end with %q (it ends with %q)", object, f.Name, line, last)
	}
	return rule, nil
}
