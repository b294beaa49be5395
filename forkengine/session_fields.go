package forkengine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// A Session field is described once, by the tags beside it in entities.go, and the plumbing every
// field needs is derived from them when the package is initialised, so adding a field needs no
// line here, in the snapshot codecs or in the hash:
//
//   - Session's `snapshot:"N,key"`: the field's place N in the snapshot encodings (the store's
//     binary and compact JSON codecs, and the field-by-field session hash of version 1
//     snapshots) and its key in the compact JSON. Places 1 to SnapshotBaseFields are the layout
//     the first encodings were written with, which never changes; a later field takes the next
//     free place and must be left out of Session's JSON when it is zero (`json:",omitempty"`),
//     so a snapshot frozen before it existed hashes as it did (a version 2 hash covers the
//     session's JSON).
//   - SessionReport's `report:"key"`, `report:"replace"` or `report:"keep"`: how a report applies
//     the field of the same name to the stored session. A key names the session and is not
//     applied; replace always writes the reported value; keep writes it only when it is given (a
//     nil pointer or nil JSON keeps the stored value). The fields a report applies are the ones
//     an identical replay is compared on (sameSession).
//   - SessionReport's `check:"identifier"`: a text that names something (a provider, a model)
//     follows the character rules of ids (checkIdentifier); every other text is free text
//     (checkStorable), and every JSON value must be an object or absent (objectOrNil).
//
// A field without its tags, or with tags its type cannot have, panics when the package is
// initialised: the first test that loads forkengine finds it, never a request.

// SnapshotBaseFields is the number of Session fields the first snapshot encodings held, at
// places 1 to SnapshotBaseFields in that order: version 1 snapshots hash them, binary snapshots
// of format 1 and compact JSON of version 1 hold them. Later fields come after, each written only
// when it is not zero.
const SnapshotBaseFields = 14

// SnapshotKind is how the snapshot encodings write a Session field.
type SnapshotKind int

// Snapshot kinds of Session fields.
const (
	SnapshotText         SnapshotKind = iota + 1 // a string, or a type whose underlying type is string
	SnapshotJSON                                 // a json.RawMessage
	SnapshotBool                                 // a bool
	SnapshotTime                                 // a time.Time
	SnapshotOptionalTime                         // a *time.Time, nil when not set
)

// SnapshotField is one Session field as its snapshot tag describes it.
type SnapshotField struct {
	Name   string       // the Go field name
	Index  int          // the field's index in Session (reflect.Value.Field)
	Number int          // its place in the snapshot encodings, from 1
	Key    string       // its key in the compact JSON encoding
	Kind   SnapshotKind // how it is written
}

// Base reports whether f is one of the fields the first encodings held.
func (f SnapshotField) Base() bool { return f.Number <= SnapshotBaseFields }

// SessionSnapshotFields returns Session's fields in the order of their places. The slice is
// shared: callers must not change it.
func SessionSnapshotFields() []SnapshotField { return sessionFields.snapshot }

// reportField is one field of SessionReport and the Session field it applies to.
type reportField struct {
	name       string // as inputs and errors name it: the field's JSON key
	from, to   int    // indexes in SessionReport and Session
	keep       bool   // a nil value keeps the stored one
	kind       reflect.Kind
	json       bool // a json.RawMessage: an object or absent, compared as JSON
	text       bool // a string or *string, checked as text
	identifier bool // a text following the rules of ids
}

type sessionFieldPlan struct {
	snapshot []SnapshotField
	applied  []reportField // the report fields that are not keys, in declaration order
	texts    []reportField // string and *string fields, in name order (as checkTexts reports)
	objects  []reportField // json.RawMessage fields, in declaration order
}

var sessionFields = planSessionFields()

var (
	rawJSONType   = reflect.TypeFor[json.RawMessage]()
	timeType      = reflect.TypeFor[time.Time]()
	timePtrType   = reflect.TypeFor[*time.Time]()
	stringType    = reflect.TypeFor[string]()
	stringPtrType = reflect.TypeFor[*string]()
)

func planSessionFields() sessionFieldPlan {
	p := sessionFieldPlan{snapshot: planSnapshotFields(reflect.TypeFor[Session]()),
		applied: planReportFields(reflect.TypeFor[Session](), reflect.TypeFor[SessionReport]())}
	for _, r := range p.applied {
		switch {
		case r.json:
			p.objects = append(p.objects, r)
		case r.text:
			p.texts = append(p.texts, r)
		}
	}
	sort.Slice(p.texts, func(i, j int) bool { return p.texts[i].name < p.texts[j].name })
	return p
}

// planReportFields reads the report tags of report (SessionReport) and pairs each field that is
// not a key with the field of the same name of session (Session), checking that its rule fits
// their types.
func planReportFields(session, report reflect.Type) []reportField {
	var applied []reportField
	for i := range report.NumField() {
		f := report.Field(i)
		rule := f.Tag.Get("report")
		if rule == "key" {
			continue
		}
		to, ok := session.FieldByName(f.Name)
		if !ok || len(to.Index) != 1 {
			panicf("%s.%s applies to no field of %s", report.Name(), f.Name, session.Name())
		}
		r := reportField{name: inputName(f.Name), from: i, to: to.Index[0], kind: to.Type.Kind(),
			json: f.Type == rawJSONType, text: f.Type == stringType || f.Type == stringPtrType,
			identifier: f.Tag.Get("check") == "identifier"}
		switch {
		case rule == "replace" && f.Type == to.Type:
		case rule == "keep" && (r.json && to.Type == rawJSONType || f.Type == reflect.PointerTo(to.Type)):
			r.keep = true
		default:
			panicf("%s.%s (%s) has report:%q for %s's %s: want key, replace (of the same type) or keep (a pointer to it, or JSON)",
				report.Name(), f.Name, f.Type, rule, session.Name(), to.Type)
		}
		if !r.json && !to.Type.Comparable() {
			panicf("%s.%s (%s) cannot be compared for an identical replay", session.Name(), f.Name, to.Type)
		}
		if check := f.Tag.Get("check"); check != "" && (check != "identifier" || !r.text) {
			panicf("%s.%s has check:%q: only a text can be check:\"identifier\"", report.Name(), f.Name, check)
		}
		applied = append(applied, r)
	}
	return applied
}

// planSnapshotFields reads the snapshot tags of t (Session) and checks them: every field has one,
// places are unique and the base places 1 to SnapshotBaseFields all taken, keys are unique, and a
// later field is omitted from the JSON when zero.
func planSnapshotFields(t reflect.Type) []SnapshotField {
	fields := make([]SnapshotField, 0, t.NumField())
	places, keys := map[int]string{}, map[string]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		number, key, ok := strings.Cut(f.Tag.Get("snapshot"), ",")
		n, err := strconv.Atoi(number)
		if !ok || err != nil || n < 1 || key == "" {
			panicf("%s.%s needs a tag snapshot:\"N,key\" (its place and compact JSON key), has %q", t.Name(), f.Name, f.Tag.Get("snapshot"))
		}
		if other, dup := places[n]; dup {
			panicf("%s.%s and %s share the snapshot place %d", t.Name(), other, f.Name, n)
		}
		if other, dup := keys[key]; dup {
			panicf("%s.%s and %s share the snapshot key %q", t.Name(), other, f.Name, key)
		}
		places[n], keys[key] = f.Name, f.Name
		sf := SnapshotField{Name: f.Name, Index: i, Number: n, Key: key, Kind: snapshotKind(f.Type)}
		if sf.Kind == 0 {
			panicf("%s.%s is a %s: the snapshot encodings write text, JSON, bool, time.Time and *time.Time", t.Name(), f.Name, f.Type)
		}
		if !sf.Base() && !omittedWhenZero(f) {
			panicf("%s.%s came after the first snapshots: it needs json:\",omitempty\" (a *time.Time for a time) so their hashes hold", t.Name(), f.Name)
		}
		fields = append(fields, sf)
	}
	for n := 1; n <= SnapshotBaseFields; n++ {
		if _, ok := places[n]; !ok {
			panicf("no %s field has the snapshot place %d of the first encodings", t.Name(), n)
		}
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].Number < fields[j].Number })
	return fields
}

func snapshotKind(t reflect.Type) SnapshotKind {
	switch {
	case t == rawJSONType:
		return SnapshotJSON
	case t == timeType:
		return SnapshotTime
	case t == timePtrType:
		return SnapshotOptionalTime
	case t.Kind() == reflect.String:
		return SnapshotText
	case t.Kind() == reflect.Bool:
		return SnapshotBool
	}
	return 0
}

// omittedWhenZero reports whether encoding/json leaves f out when it is zero.
func omittedWhenZero(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "omitzero" || o == "omitempty" && f.Type != timeType {
			return true
		}
	}
	return false
}

// inputName is the name a GraphQL input gives a Go field: its first word in lower case, a final
// ID as Id (ProviderSessionID: providerSessionId).
func inputName(goName string) string {
	if s, ok := strings.CutSuffix(goName, "ID"); ok && s != "" {
		goName = s + "Id"
	}
	r := []rune(goName)
	for i := 0; i < len(r) && unicode.IsUpper(r[i]); i++ {
		if i > 0 && i+1 < len(r) && unicode.IsLower(r[i+1]) {
			break // the next word's capital (URLPath: urlPath)
		}
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}

func panicf(format string, args ...any) {
	panic("forkengine: " + fmt.Sprintf(format, args...))
}

// applySessionReport is s with the report applied (a new session when not found): every field the
// report replaces, and every one it keeps that the report gives.
func applySessionReport(s Session, found bool, in SessionReport, now time.Time) Session {
	if !found {
		s = Session{WorkspaceID: in.WorkspaceID, ID: in.ID, Visible: true, CreatedAt: now}
	}
	dst, src := reflect.ValueOf(&s).Elem(), reflect.ValueOf(&in).Elem()
	for _, f := range sessionFields.applied {
		v := src.Field(f.from)
		switch {
		case !f.keep:
		case v.IsNil():
			continue // not reported: the stored value stays
		case !f.json:
			v = v.Elem()
		}
		dst.Field(f.to).Set(v)
	}
	s.DeletedAt = nil // a report restores a soft-deleted session
	if s.Settings == nil {
		s.Settings = []byte("{}")
	}
	s.UpdatedAt = now
	return s
}

// sameSession compares everything a report can change; timestamps are not reported.
func sameSession(a, b Session) bool {
	if a.Deleted() != b.Deleted() {
		return false
	}
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for _, f := range sessionFields.applied {
		x, y := va.Field(f.to), vb.Field(f.to)
		var same bool
		switch {
		case f.json:
			same = sameJSON(x.Bytes(), y.Bytes())
		case f.kind == reflect.String:
			same = x.String() == y.String()
		case f.kind == reflect.Bool:
			same = x.Bool() == y.Bool()
		default:
			same = x.Equal(y)
		}
		if !same {
			return false
		}
	}
	return true
}

// checkReportedTexts applies the rules of texts to a report's string fields, in name order: the
// first invalid one is reported. Errors: BAD_USER_INPUT (reason invalid_text or invalid_id).
func checkReportedTexts(in *SessionReport) error {
	v := reflect.ValueOf(in).Elem()
	for _, f := range sessionFields.texts {
		field := v.Field(f.from)
		var text *string
		if field.Kind() == reflect.Pointer {
			if field.IsNil() {
				continue
			}
			text = field.Interface().(*string)
		} else {
			text = field.Addr().Interface().(*string)
		}
		if err := checkTextAs(f.name, text, f.identifier); err != nil {
			return err
		}
	}
	return nil
}

// checkReportedObjects requires each of a report's JSON values to be an object or absent, in
// declaration order, and keeps each as objectOrNil returns it. Errors: BAD_USER_INPUT (reason
// invalid_text for bytes that are not UTF-8).
func checkReportedObjects(in *SessionReport) error {
	v := reflect.ValueOf(in).Elem()
	for _, f := range sessionFields.objects {
		field := v.Field(f.from)
		obj, err := objectOrNil(f.name, field.Bytes())
		field.SetBytes(obj)
		if err != nil {
			return err
		}
	}
	return nil
}
