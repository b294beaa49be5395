package resolvers

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
)

// validateIDArguments (part of fieldPolicy) applies forkengine's id rules to every argument of
// type ID, at any level, before the field resolves, so a read of session(id: " a") is
// BAD_USER_INPUT (reason invalid_id) exactly as a write of it is, instead of finding nothing.
// Ids inside input objects are the engine's to check, on the writes that take them.
func validateIDArguments(fc *graphql.FieldContext) error {
	if fc.Field.Definition == nil {
		return nil
	}
	for _, arg := range fc.Field.Definition.Arguments {
		if !isIDType(arg.Type) {
			continue
		}
		if err := validateIDValue(arg.Name, fc.Args[arg.Name]); err != nil {
			return err
		}
	}
	return nil
}

// isIDType reports whether t is ID, ID! or a list of them.
func isIDType(t *ast.Type) bool {
	for t != nil && t.Elem != nil {
		t = t.Elem
	}
	return t != nil && t.NamedType == "ID"
}

func validateIDValue(name string, v any) error {
	switch v := v.(type) {
	case string:
		return forkengine.ValidateID(name, v)
	case *string:
		if v != nil {
			return forkengine.ValidateID(name, *v)
		}
	case []string:
		for _, id := range v {
			if err := forkengine.ValidateID(name, id); err != nil {
				return err
			}
		}
	case []any:
		for _, id := range v {
			if err := validateIDValue(name, id); err != nil {
				return err
			}
		}
	}
	return nil
}
