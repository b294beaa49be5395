package models

import (
	"encoding/json"
	"reflect"
)

// An API input and the engine value it becomes hold the same fields under the same names, so
// the mapping between them is derived rather than written out field by field: a field added to
// both reaches the engine without a line here. byName pairs the fields once; copyByName applies
// the pairs.

// fieldPair is one field of the input and the engine field it is copied to.
type fieldPair struct {
	from, to int
	json     bool // the input's JSON scalar becomes a json.RawMessage (rawOrNil)
}

var (
	jsonType    = reflect.TypeFor[JSON]()
	rawJSONType = reflect.TypeFor[json.RawMessage]()
)

// byName pairs every field of the input type from with the field of the same name of to. A field
// of the same type is copied as it is, a JSON scalar into a json.RawMessage through rawOrNil; the
// fields named in explicit are left to the caller (an enum of the API beside the engine's). Any
// other field panics when the package is initialised, so a field that would be dropped is found
// by the first test that loads models, never in a request.
func byName(from, to reflect.Type, explicit ...string) []fieldPair {
	var pairs []fieldPair
	for i := range from.NumField() {
		f := from.Field(i)
		if contains(explicit, f.Name) {
			continue
		}
		t, ok := to.FieldByName(f.Name)
		switch {
		case !ok || len(t.Index) != 1:
			panic("models: " + to.String() + " has no field " + f.Name + " of " + from.String())
		case f.Type == t.Type:
			pairs = append(pairs, fieldPair{from: i, to: t.Index[0]})
		case f.Type == jsonType && t.Type == rawJSONType:
			pairs = append(pairs, fieldPair{from: i, to: t.Index[0], json: true})
		default:
			panic("models: " + from.String() + "." + f.Name + " is a " + f.Type.String() + ", " + to.String() + "'s a " + t.Type.String())
		}
	}
	return pairs
}

// copyByName copies src's paired fields into *dst.
func copyByName[From, To any](pairs []fieldPair, dst *To, src From) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for _, p := range pairs {
		v := s.Field(p.from)
		if p.json {
			v = reflect.ValueOf(rawOrNil(v.Interface().(JSON)))
		}
		d.Field(p.to).Set(v)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
