package store

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The session part of the compact snapshot encodings is derived from Session's snapshot tags
// (forkengine.SessionSnapshotFields): each field is written by its kind at its place, so a field
// added to Session is kept by both encodings without a line here. The places of the first
// encodings (forkengine.SnapshotBaseFields) are written as they always were, so every snapshot
// stored before decodes as it did and one without later fields is stored in the same bytes; a
// later field is written only when it is not zero: in the compact JSON under its key, in the
// binary encoding (format 2) after the base fields as its place and its value.

// The fields are read and written through their offsets, checked against their types once, when
// the plan is made: the snapshot of every committed operation is its session alone, and reflect's
// field access (and the value it makes escape) made its encoding 2.4 times and its decoding 4
// times slower than the field-by-field code it replaced.

// sessionField is one session field: how it is written, its place, and its offsets in
// forkengine.Session and in the compact struct. It is kept small: the loops copy it.
type sessionField struct {
	kind          forkengine.SnapshotKind
	number        int
	at, compactAt uintptr
}

// sessionCodec is the plan of the session part, made once from the tags.
type sessionCodec struct {
	all   []sessionField // in place order: the base ones, then the later ones
	base  []sessionField
	later []sessionField // in place order
	times []sessionField // the time fields, for exactTimes
	sized []sessionField // the text and JSON fields, for size
	// compact is a struct type of one field per session field, in place order, each of the
	// type and under the JSON key the compact encoding writes it with.
	compact reflect.Type
}

var sessionSnapshot = newSessionCodec(forkengine.SessionSnapshotFields())

func newSessionCodec(fields []forkengine.SnapshotField) sessionCodec {
	var c sessionCodec
	session := reflect.TypeFor[forkengine.Session]()
	compact := make([]reflect.StructField, 0, len(fields))
	for _, f := range fields {
		field := session.Field(f.Index)
		if want := sessionFieldType(f.Kind); field.Type != want && (f.Kind != forkengine.SnapshotText || field.Type.Kind() != reflect.String) {
			panic(fmt.Sprintf("store: Session.%s is a %s, its snapshot kind a %s", f.Name, field.Type, want))
		}
		tag := f.Key
		if !f.Base() || f.Kind == forkengine.SnapshotOptionalTime {
			tag += ",omitempty"
		}
		compact = append(compact, reflect.StructField{Name: "F" + strconv.Itoa(f.Number), Type: compactType(f.Kind),
			Tag: reflect.StructTag(`json:"` + tag + `"`)})
		c.all = append(c.all, sessionField{kind: f.Kind, number: f.Number, at: field.Offset})
	}
	c.compact = reflect.StructOf(compact)
	for i, f := range fields {
		c.all[i].compactAt = c.compact.Field(i).Offset
		sf := c.all[i]
		if f.Base() {
			c.base = append(c.base, sf)
		} else {
			c.later = append(c.later, sf)
		}
		switch f.Kind {
		case forkengine.SnapshotTime, forkengine.SnapshotOptionalTime:
			c.times = append(c.times, sf)
		case forkengine.SnapshotText, forkengine.SnapshotJSON:
			c.sized = append(c.sized, sf)
		}
	}
	return c
}

// sessionFieldType is the type a Session field of kind k has (a text may be of a string type).
func sessionFieldType(k forkengine.SnapshotKind) reflect.Type {
	switch k {
	case forkengine.SnapshotJSON:
		return reflect.TypeFor[json.RawMessage]()
	case forkengine.SnapshotBool:
		return reflect.TypeFor[bool]()
	case forkengine.SnapshotTime:
		return reflect.TypeFor[time.Time]()
	case forkengine.SnapshotOptionalTime:
		return reflect.TypeFor[*time.Time]()
	}
	return reflect.TypeFor[string]()
}

// compactType is the type a field of kind k has in the compact JSON: times as Unix microseconds.
func compactType(k forkengine.SnapshotKind) reflect.Type {
	switch k {
	case forkengine.SnapshotJSON:
		return reflect.TypeFor[json.RawMessage]()
	case forkengine.SnapshotBool:
		return reflect.TypeFor[bool]()
	case forkengine.SnapshotTime:
		return reflect.TypeFor[int64]()
	case forkengine.SnapshotOptionalTime:
		return reflect.TypeFor[*int64]()
	}
	return reflect.TypeFor[string]()
}

// fieldAt is the field of type T at offset off of the struct at p; newSessionCodec checked T.
func fieldAt[T any](p unsafe.Pointer, off uintptr) *T { return (*T)(unsafe.Add(p, off)) }

// toCompact is a pointer to the compact form of s, for encoding/json.
func (c *sessionCodec) toCompact(s *forkengine.Session) any {
	out := reflect.New(c.compact)
	src, dst := unsafe.Pointer(s), out.UnsafePointer()
	for _, f := range c.all {
		switch f.kind {
		case forkengine.SnapshotText:
			*fieldAt[string](dst, f.compactAt) = *fieldAt[string](src, f.at)
		case forkengine.SnapshotJSON:
			*fieldAt[json.RawMessage](dst, f.compactAt) = *fieldAt[json.RawMessage](src, f.at)
		case forkengine.SnapshotBool:
			*fieldAt[bool](dst, f.compactAt) = *fieldAt[bool](src, f.at)
		case forkengine.SnapshotTime:
			*fieldAt[int64](dst, f.compactAt) = micros(*fieldAt[time.Time](src, f.at))
		case forkengine.SnapshotOptionalTime:
			*fieldAt[*int64](dst, f.compactAt) = microsPtr(*fieldAt[*time.Time](src, f.at))
		}
	}
	return out.Interface()
}

// newCompact is an empty compact session to decode into (a pointer, so encoding/json fills it).
func (c *sessionCodec) newCompact() any { return reflect.New(c.compact).Interface() }

// fromCompact sets *s from a compact session newCompact made.
func (c *sessionCodec) fromCompact(s *forkengine.Session, compact any) {
	src, dst := reflect.ValueOf(compact).UnsafePointer(), unsafe.Pointer(s)
	for _, f := range c.all {
		switch f.kind {
		case forkengine.SnapshotText:
			*fieldAt[string](dst, f.at) = *fieldAt[string](src, f.compactAt)
		case forkengine.SnapshotJSON:
			*fieldAt[json.RawMessage](dst, f.at) = *fieldAt[json.RawMessage](src, f.compactAt)
		case forkengine.SnapshotBool:
			*fieldAt[bool](dst, f.at) = *fieldAt[bool](src, f.compactAt)
		case forkengine.SnapshotTime:
			*fieldAt[time.Time](dst, f.at) = fromMicros(*fieldAt[int64](src, f.compactAt))
		case forkengine.SnapshotOptionalTime:
			*fieldAt[*time.Time](dst, f.at) = fromMicrosPtr(*fieldAt[*int64](src, f.compactAt))
		}
	}
}

// exactTimes reports whether every time of s survives the trip through Unix microseconds.
func (c *sessionCodec) exactTimes(s *forkengine.Session) bool {
	p := unsafe.Pointer(s)
	for _, f := range c.times {
		switch f.kind {
		case forkengine.SnapshotTime:
			if !exactMicros(*fieldAt[time.Time](p, f.at)) {
				return false
			}
		case forkengine.SnapshotOptionalTime:
			if !exactMicrosPtr(*fieldAt[*time.Time](p, f.at)) {
				return false
			}
		}
	}
	return true
}

// size is an upper bound of the bytes the binary session part of s takes: its texts and JSON,
// 10 bytes for each field's length or number and 10 for each later one's place.
func (c *sessionCodec) size(s *forkengine.Session) int {
	p := unsafe.Pointer(s)
	n := 10 * (len(c.all) + len(c.later))
	for _, f := range c.sized {
		switch f.kind {
		case forkengine.SnapshotText:
			n += len(*fieldAt[string](p, f.at))
		case forkengine.SnapshotJSON:
			n += len(*fieldAt[json.RawMessage](p, f.at))
		}
	}
	return n
}

// zero reports whether f of the session at p holds its zero value (is not written).
func (f sessionField) zero(p unsafe.Pointer) bool {
	switch f.kind {
	case forkengine.SnapshotText:
		return *fieldAt[string](p, f.at) == ""
	case forkengine.SnapshotJSON:
		return len(*fieldAt[json.RawMessage](p, f.at)) == 0
	case forkengine.SnapshotBool:
		return !*fieldAt[bool](p, f.at)
	case forkengine.SnapshotTime:
		return fieldAt[time.Time](p, f.at).IsZero()
	}
	return *fieldAt[*time.Time](p, f.at) == nil
}

// later counts the fields of s the first encodings did not have that are set.
func (c *sessionCodec) laterSet(s *forkengine.Session) int {
	p, n := unsafe.Pointer(s), 0
	for _, f := range c.later {
		if !f.zero(p) {
			n++
		}
	}
	return n
}

// appendBinary writes the session part of s: the base fields in place order, then, when later
// (the count laterSet gives) is not zero (format 2), that count and each set later field's place
// and value.
func (c *sessionCodec) appendBinary(b []byte, s *forkengine.Session, later int) []byte {
	p := unsafe.Pointer(s)
	for _, f := range c.base {
		b = f.appendTo(b, p)
	}
	if later == 0 {
		return b
	}
	b = binary.AppendUvarint(b, uint64(later))
	for _, f := range c.later {
		if !f.zero(p) {
			b = f.appendTo(binary.AppendUvarint(b, uint64(f.number)), p)
		}
	}
	return b
}

func (f sessionField) appendTo(b []byte, p unsafe.Pointer) []byte {
	switch f.kind {
	case forkengine.SnapshotText:
		return appendStrings(b, *fieldAt[string](p, f.at))
	case forkengine.SnapshotJSON:
		return appendRaw(b, *fieldAt[json.RawMessage](p, f.at))
	case forkengine.SnapshotBool:
		return appendBool(b, *fieldAt[bool](p, f.at))
	case forkengine.SnapshotTime:
		return binary.AppendVarint(b, micros(*fieldAt[time.Time](p, f.at)))
	}
	return appendMicrosPtr(b, microsPtr(*fieldAt[*time.Time](p, f.at)))
}

// readBinary reads the session part appendBinary wrote into *s (format 2 when later). A later
// field of a place this forkgraph does not know, out of place order or given twice fails r: its
// value can be neither skipped nor kept.
func (c *sessionCodec) readBinary(r *binaryReader, s *forkengine.Session, later bool) {
	p := unsafe.Pointer(s)
	for _, f := range c.base {
		f.readFrom(r, p)
	}
	if !later {
		return
	}
	next := 0 // the index in c.later the next field may have, at the least
	for n := r.count(2); n > 0; n-- {
		place := r.uvarint()
		for next < len(c.later) && uint64(c.later[next].number) < place {
			next++
		}
		if next == len(c.later) || uint64(c.later[next].number) != place {
			r.fail()
			return
		}
		c.later[next].readFrom(r, p)
		next++
	}
}

func (f sessionField) readFrom(r *binaryReader, p unsafe.Pointer) {
	switch f.kind {
	case forkengine.SnapshotText:
		*fieldAt[string](p, f.at) = r.str()
	case forkengine.SnapshotJSON:
		*fieldAt[json.RawMessage](p, f.at) = r.raw()
	case forkengine.SnapshotBool:
		*fieldAt[bool](p, f.at) = r.byte() == 1
	case forkengine.SnapshotTime:
		*fieldAt[time.Time](p, f.at) = fromMicros(r.varint())
	case forkengine.SnapshotOptionalTime:
		*fieldAt[*time.Time](p, f.at) = fromMicrosPtr(r.microsPtr())
	}
}
