package resolvers

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// objectIDs lists every argument (Object.field.argument) and input field (Input.field) that names
// an object, with the type it names. Each accepts the object's local id or the global id a query
// returned (docs/api.md, "Ids: global and local"); resolveIDs turns the second into the first
// before anything else sees it, so resolvers and the engine only ever work on local ids.
var objectIDs = map[string]models.NodeType{
	"Query.session.id":                     models.NodeSession,
	"Query.forkOperation.id":               models.NodeForkOperation,
	"Query.verifyForkedSession.sessionId":  models.NodeSession,
	"Mutation.deleteSession.id":            models.NodeSession,
	"Mutation.acknowledgeForkOperation.id": models.NodeForkOperation,
	"Mutation.reconcileForkOperation.id":   models.NodeForkOperation,
	"Mutation.abandonForkOperation.id":     models.NodeForkOperation,
	"Subscription.forkOperationUpdated.id": models.NodeForkOperation,
	"ForkOperationFilter.sourceSessionId":  models.NodeSession,
	"ForkOperationFilter.targetSessionId":  models.NodeSession,
	"ForkOperationFilter.throughTurnId":    models.NodeTurn,
	"ReportSessionInput.id":                models.NodeSession,
	"ReportTurnInput.sessionId":            models.NodeSession,
	"ReportTurnInput.id":                   models.NodeTurn,
	"AppendMessagesInput.sessionId":        models.NodeSession,
	"AppendMessagesInput.turnId":           models.NodeTurn,
	"ReportInteractionInput.sessionId":     models.NodeSession,
	"ReportInteractionInput.turnId":        models.NodeTurn,
	"ReportAuditMessageInput.sessionId":    models.NodeSession,
	"ReportAuditMessageInput.id":           models.NodeAuditMessage,
	"MessageInput.id":                      models.NodeMessage,
	"ForkSessionInput.sourceSessionId":     models.NodeSession,
	"ForkSessionInput.throughTurnId":       models.NodeTurn,
	"ForkSessionInput.targetSessionId":     models.NodeSession,
}

// globalIDs are the arguments that take global ids only: the Node lookups.
var globalIDs = map[string]bool{"Query.node.id": true, "Query.nodes.ids": true}

// idArguments is the one place ids in arguments are read (the first step of fieldPolicy).
// Before the field resolves, resolveIDs
//   - decodes every global id given for an object (objectIDs) into its local id, refusing one
//     that names another type or another workspace than the field's;
//   - checks every global-only id (node, nodes) decodes;
//   - applies forkengine's id rules to every argument of type ID, at any level, so a read of
//     session(id: " a") is BAD_USER_INPUT (reason invalid_id) exactly as a write of it is.
//
// Ids inside input objects are then the engine's to check, on the writes that take them.
type idArguments struct {
	schema *ast.Schema
}

func (ids idArguments) resolveIDs(fc *graphql.FieldContext) error {
	if fc.Field.Definition == nil || len(fc.Field.Definition.Arguments) == 0 {
		return nil
	}
	ws, _ := fc.Args["workspaceId"].(string)
	for _, arg := range fc.Field.Definition.Arguments {
		value, ok := fc.Args[arg.Name]
		if !ok || value == nil {
			continue
		}
		if def := ids.schema.Types[arg.Type.Name()]; def != nil && def.Kind == ast.InputObject {
			rewritten, err := ids.resolveInput(def, reflect.ValueOf(value), ws)
			if err != nil {
				return err
			}
			fc.Args[arg.Name] = rewritten.Interface()
			continue
		}
		if !isIDType(arg.Type) {
			continue // most arguments (first, after, ...): no allocation on the hot path of lists
		}
		coordinate := fc.Object + "." + fc.Field.Name + "." + arg.Name
		if globalIDs[coordinate] {
			if err := validateGlobalIDs(arg.Name, value); err != nil {
				return err
			}
			continue
		}
		if typ, ok := objectIDs[coordinate]; ok {
			local, err := localArgument(arg.Name, value, typ, ws)
			if err != nil {
				return err
			}
			fc.Args[arg.Name], value = local, local
		}
		if err := validateIDValue(arg.Name, value); err != nil {
			return err
		}
	}
	return nil
}

// localID returns the local id an argument names: the value itself, or, when it has the form of
// a global id, the id it decodes to, which must name typ in workspace ws. Errors: BAD_USER_INPUT
// (reason invalid_id).
func localID(field, value string, typ models.NodeType, ws string) (string, error) {
	ref, ok := models.ParseGlobalID(value)
	switch {
	case !ok:
		return value, nil
	case ref.Type != typ:
		return "", forkengine.ReasonErrorf(forkengine.CodeInvalid, forkengine.ReasonInvalidID,
			"%s names a %s, not a %s", field, ref.Type, typ)
	case ref.WorkspaceID != ws:
		return "", forkengine.ReasonErrorf(forkengine.CodeInvalid, forkengine.ReasonInvalidID,
			"%s belongs to workspace %q, not %q", field, ref.WorkspaceID, ws)
	}
	return ref.LocalID, nil
}

// localArgument is localID for an argument's value (ID or ID!).
func localArgument(field string, value any, typ models.NodeType, ws string) (any, error) {
	switch v := value.(type) {
	case string:
		return localID(field, v, typ, ws)
	case *string:
		if v == nil {
			return v, nil
		}
		local, err := localID(field, *v, typ, ws)
		return &local, err
	}
	return nil, fmt.Errorf("argument %s is %T, not an id", field, value)
}

// parseNodeID decodes the id of a Node lookup; its workspace and local parts follow the id rules.
// Errors: BAD_USER_INPUT (reason invalid_id).
func parseNodeID(field, id string) (models.GlobalRef, error) {
	ref, ok := models.ParseGlobalID(id)
	if !ok {
		return ref, forkengine.ReasonErrorf(forkengine.CodeInvalid, forkengine.ReasonInvalidID,
			"%s %q is not a global id (pass an `id` a query returned)", field, id)
	}
	if err := forkengine.ValidateID(field+" workspace", ref.WorkspaceID); err != nil {
		return ref, err
	}
	return ref, forkengine.ValidateID(field, ref.LocalID)
}

func validateGlobalIDs(field string, value any) error {
	values, ok := value.([]string)
	if s, one := value.(string); one {
		values, ok = []string{s}, true
	}
	if !ok {
		return fmt.Errorf("argument %s is %T, not ids", field, value)
	}
	for _, id := range values {
		if _, err := parseNodeID(field, id); err != nil {
			return err
		}
	}
	return nil
}

// resolveInput decodes the object ids (objectIDs) of an input object, at any depth, and returns
// the value with local ids in their place (a copy for a struct held by value). ws is the
// workspace of the field, unless the input names its own (workspaceId).
func (ids idArguments) resolveInput(def *ast.Definition, v reflect.Value, ws string) (reflect.Value, error) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v, nil
		}
		_, err := ids.resolveInput(def, v.Elem(), ws)
		return v, err
	case reflect.Slice:
		for i := range v.Len() {
			if _, err := ids.resolveInput(def, v.Index(i), ws); err != nil {
				return v, err
			}
		}
		return v, nil
	case reflect.Struct:
	default:
		return v, fmt.Errorf("input %s is a %s", def.Name, v.Kind())
	}
	if !v.CanSet() {
		settable := reflect.New(v.Type()).Elem()
		settable.Set(v)
		v = settable
	}
	fields := jsonFields(v.Type())
	if i, ok := fields["workspaceId"]; ok && v.Field(i).Kind() == reflect.String {
		ws = v.Field(i).String()
	}
	for _, f := range def.Fields {
		i, ok := fields[f.Name]
		if !ok {
			return v, fmt.Errorf("input %s has no Go field for %s", def.Name, f.Name)
		}
		if child := ids.schema.Types[f.Type.Name()]; child != nil && child.Kind == ast.InputObject {
			if _, err := ids.resolveInput(child, v.Field(i), ws); err != nil {
				return v, err
			}
			continue
		}
		if typ, ok := objectIDs[def.Name+"."+f.Name]; ok {
			if err := setLocalID(v.Field(i), f.Name, typ, ws); err != nil {
				return v, err
			}
		}
	}
	return v, nil
}

// setLocalID replaces a string or *string field holding a global id by its local id.
func setLocalID(field reflect.Value, name string, typ models.NodeType, ws string) error {
	if field.Kind() == reflect.Pointer {
		if field.IsNil() {
			return nil
		}
		field = field.Elem()
	}
	local, err := localID(name, field.String(), typ, ws)
	if err == nil {
		field.SetString(local)
	}
	return err
}

// jsonFields maps the GraphQL names of a generated input struct (its json tags) to field
// indexes. Built once per type.
func jsonFields(t reflect.Type) map[string]int {
	if m, ok := jsonFieldCache.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = i
		}
	}
	jsonFieldCache.Store(t, m)
	return m
}

var jsonFieldCache sync.Map // reflect.Type → map[string]int

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
