package transports

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Deferral is what incremental delivery must know of the schema to leave the deferred fields
// out of a query's first payload. gqlgen writes null in the place of each deferred field it will
// deliver later, non-null ones included (`lifecycleCapabilities: null`), and the incremental
// delivery RFC leaves such fields out: a client that merges payloads (Apollo Client 4) took the
// nulls for the answer, reported the first payload as complete and failed reading it. Only a
// field gqlgen resolves on its own can be deferred (a resolver method: Later); a deferred field
// that is not one is resolved with its object and sent in the first payload, which the RFC
// allows. The zero Deferral leaves first payloads as gqlgen wrote them.
type Deferral struct {
	// Schema is the executable schema's (graphql.ExecutableSchema.Schema).
	Schema *ast.Schema
	// Later reports whether gqlgen resolves the field of the object type apart from its object,
	// so that in a deferred fragment its value comes in a later payload.
	Later func(typeName, fieldName string) bool
}

// firstPayload returns data, the data of a query's first payload, without the deferred fields
// whose values come later. Data it cannot read is returned as it is: the payload is never made
// worse than gqlgen's.
func (d Deferral) firstPayload(opCtx *graphql.OperationContext, data json.RawMessage) json.RawMessage {
	if d.Schema == nil || d.Later == nil || opCtx == nil || opCtx.Operation == nil || d.Schema.Query == nil {
		return data
	}
	out, err := d.object(opCtx, data, opCtx.Operation.SelectionSet, d.Schema.Query)
	if err != nil {
		return data
	}
	return out
}

// laterPayload returns data, the data of a later payload for the object at path, with the
// fields deferred further inside it left out (gqlgen marshals a deferred fragment's object with
// nulls in the place of the fragments nested in it, as in the first payload). The payload's own
// fields are kept whatever their value: they are the answer.
func (d Deferral) laterPayload(opCtx *graphql.OperationContext, path ast.Path, data json.RawMessage) json.RawMessage {
	if d.Schema == nil || d.Later == nil || opCtx == nil || opCtx.Operation == nil || d.Schema.Query == nil || isNull(data) {
		return data
	}
	sel, def, ok := d.at(opCtx, path)
	if !ok {
		return data
	}
	members, err := decodeObject(data)
	if err != nil {
		return data
	}
	fields := map[string]graphql.CollectedField{}
	for _, t := range d.candidates(opCtx, sel, def, members) {
		for _, f := range graphql.CollectFields(opCtx, sel, d.implements(t)) {
			if _, ok := fields[f.Alias]; !ok {
				fields[f.Alias] = f
			}
		}
	}
	for i, m := range members {
		f, ok := fields[m.key]
		if !ok || f.Definition == nil {
			continue
		}
		if members[i].value, err = d.value(opCtx, m.value, f.Selections, f.Definition.Type); err != nil {
			return data
		}
	}
	return encodeObject(members)
}

// at finds the selection set and the type of the object at path in the operation.
func (d Deferral) at(opCtx *graphql.OperationContext, path ast.Path) (ast.SelectionSet, *ast.Definition, bool) {
	sel, def := opCtx.Operation.SelectionSet, d.Schema.Query
	var typ *ast.Type
	for _, elem := range path {
		switch e := elem.(type) {
		case ast.PathName:
			field, ok := d.field(opCtx, sel, def, string(e))
			if !ok || field.Definition == nil {
				return nil, nil, false
			}
			sel, typ = field.Selections, field.Definition.Type
		case ast.PathIndex:
			if typ == nil || typ.Elem == nil {
				return nil, nil, false
			}
			typ = typ.Elem
		}
		if typ != nil && typ.Elem == nil {
			if def = d.Schema.Types[typ.Name()]; def == nil {
				return nil, nil, false
			}
		}
	}
	return sel, def, typ == nil || typ.Elem == nil
}

// field finds the field selected under alias on an object of type def, whatever object type it
// turns out to be.
func (d Deferral) field(opCtx *graphql.OperationContext, sel ast.SelectionSet, def *ast.Definition, alias string) (graphql.CollectedField, bool) {
	types := []*ast.Definition{def}
	if def.Kind != ast.Object {
		types = d.Schema.GetPossibleTypes(def)
	}
	for _, t := range types {
		for _, f := range graphql.CollectFields(opCtx, sel, d.implements(t)) {
			if f.Alias == alias {
				return f, true
			}
		}
	}
	return graphql.CollectedField{}, false
}

// value rewrites one value of type typ selected with sel.
func (d Deferral) value(opCtx *graphql.OperationContext, raw json.RawMessage, sel ast.SelectionSet, typ *ast.Type) (json.RawMessage, error) {
	if len(sel) == 0 || isNull(raw) {
		return raw, nil
	}
	if typ.Elem != nil {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		buf.WriteByte('[')
		for i, item := range items {
			item, err := d.value(opCtx, item, sel, typ.Elem)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(item)
		}
		buf.WriteByte(']')
		return buf.Bytes(), nil
	}
	def := d.Schema.Types[typ.Name()]
	if def == nil {
		return raw, nil
	}
	return d.object(opCtx, raw, sel, def)
}

// member is one entry of a JSON object, in the order gqlgen wrote it.
type member struct {
	key   string
	value json.RawMessage
}

// object rewrites one object of type def (an object, interface or union type) selected with sel.
func (d Deferral) object(opCtx *graphql.OperationContext, raw json.RawMessage, sel ast.SelectionSet, def *ast.Definition) (json.RawMessage, error) {
	members, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	// The fields collected for each type the object may be: its own type, named by __typename
	// when selected, else every possible type of an abstract one.
	var fieldsByType []map[string]graphql.CollectedField
	var typeNames []string
	for _, t := range d.candidates(opCtx, sel, def, members) {
		byAlias := map[string]graphql.CollectedField{}
		for _, f := range graphql.CollectFields(opCtx, sel, d.implements(t)) {
			byAlias[f.Alias] = f
		}
		fieldsByType, typeNames = append(fieldsByType, byAlias), append(typeNames, t.Name)
	}
	kept := members[:0:0]
	for _, m := range members {
		field, later := d.placeholder(m, fieldsByType, typeNames)
		if later {
			continue
		}
		if field.Field != nil && field.Definition != nil {
			if m.value, err = d.value(opCtx, m.value, field.Selections, field.Definition.Type); err != nil {
				return nil, err
			}
		}
		kept = append(kept, m)
	}
	return encodeObject(kept), nil
}

// encodeObject writes members as a JSON object, in their order.
func encodeObject(members []member) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// placeholder finds the field behind m and reports whether m is gqlgen's null in the place of a
// deferred field that comes later: for every type the object may be that selects it.
func (d Deferral) placeholder(m member, fieldsByType []map[string]graphql.CollectedField, typeNames []string) (graphql.CollectedField, bool) {
	var found graphql.CollectedField
	later := isNull(m.value)
	seen := false
	for i, byAlias := range fieldsByType {
		f, ok := byAlias[m.key]
		if !ok {
			continue
		}
		if !seen {
			found, seen = f, true
		}
		later = later && f.IsDeferred() && d.Later(typeNames[i], f.Name)
	}
	return found, seen && later
}

// candidates are the object types an object of type def may be: def itself, or of an abstract
// type the one its __typename names (under whatever alias it was selected), else every possible
// type.
func (d Deferral) candidates(opCtx *graphql.OperationContext, sel ast.SelectionSet, def *ast.Definition, members []member) []*ast.Definition {
	if def.Kind == ast.Object {
		return []*ast.Definition{def}
	}
	possible := d.Schema.GetPossibleTypes(def)
	typename := map[string]bool{}
	for _, f := range graphql.CollectFields(opCtx, sel, nil) {
		if f.Name == "__typename" {
			typename[f.Alias] = true
		}
	}
	for _, m := range members {
		var name string
		if !typename[m.key] || json.Unmarshal(m.value, &name) != nil {
			continue
		}
		for _, p := range possible {
			if p.Name == name {
				return []*ast.Definition{p}
			}
		}
	}
	return possible
}

// implements is what gqlgen's generated code collects an object type's fields with: its name, its
// interfaces and the unions it belongs to.
func (d Deferral) implements(def *ast.Definition) []string {
	names := append([]string{def.Name}, def.Interfaces...)
	for _, t := range d.Schema.Types {
		if t.Kind == ast.Union {
			for _, member := range t.Types {
				if member == def.Name {
					names = append(names, t.Name)
				}
			}
		}
	}
	return names
}

// decodeObject reads a JSON object's members in order.
func decodeObject(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v", tok)
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		members = append(members, member{key: key, value: value})
	}
	return members, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
