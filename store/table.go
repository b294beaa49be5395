package store

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A table is described once: its name, its key and, per column, the SQL name, the field of the
// domain value it holds and how that field is stored (the column's encoding). Every statement
// that names the columns (select lists, insert and upsert statements, scan targets, bound values)
// is derived from the description, so a column is spelled in one place in Go and a domain value
// is read and written without a row struct beside it.
type table[D any] struct {
	name    string
	key     []string // the primary key's columns
	columns []column[D]
	names   []string // the columns' names, in order
}

// column is one column of a table of D: scan returns where a read of the column goes in d,
// value the stored form of d's field.
type column[D any] struct {
	name  string
	scan  func(d *D) any
	value func(d *D) any
}

func newTable[D any](name string, key []string, columns ...column[D]) table[D] {
	t := newGlobalTable(name, key, columns...)
	if t.names[0] != "workspace_id" {
		panic("store: table " + name + " does not start with workspace_id") // eachOfWorkspace relies on it
	}
	return t
}

// newGlobalTable describes a table whose rows belong to no workspace, or not first to one (a
// counter's scope, a server key, a provider session's claim): it has no listAfterWorkspace.
func newGlobalTable[D any](name string, key []string, columns ...column[D]) table[D] {
	t := table[D]{name: name, key: key, columns: columns}
	for _, c := range columns {
		t.names = append(t.names, c.name)
	}
	for _, k := range key {
		if !contains(t.names, k) {
			panic("store: table " + name + " has no column " + k + " for its key")
		}
	}
	return t
}

// without is t with the named columns left out, the others in their order: the columns of a
// statement that writes all but some (an UPDATE leaves out the key and what is fixed at insert).
func (t table[D]) without(names ...string) table[D] {
	out := table[D]{name: t.name, key: t.key}
	for _, c := range t.columns {
		if !contains(names, c.name) {
			out.columns, out.names = append(out.columns, c), append(out.names, c.name)
		}
	}
	return out
}

// only is t's named columns, in the order of names (a WHERE clause's).
func (t table[D]) only(names ...string) table[D] {
	out := table[D]{name: t.name, key: t.key}
	for _, n := range names {
		i := slices.Index(t.names, n)
		if i < 0 {
			panic("store: table " + t.name + " has no column " + n)
		}
		out.columns, out.names = append(out.columns, t.columns[i]), append(out.names, n)
	}
	return out
}

// list is the column list, each name prefixed (an alias such as "t.", or "").
func (t table[D]) list(prefix string) string {
	return prefix + strings.Join(t.names, ", "+prefix)
}

// listAfterWorkspace is list without workspace_id, the first column (eachOfWorkspace).
func (t table[D]) listAfterWorkspace(prefix string) string {
	if t.names[0] != "workspace_id" {
		panic("store: table " + t.name + " does not start with workspace_id")
	}
	return prefix + strings.Join(t.names[1:], ", "+prefix)
}

// targets are the scan destinations of every column of d, in column order.
func (t table[D]) targets(d *D) []any {
	out := make([]any, len(t.columns))
	for i, c := range t.columns {
		out[i] = c.scan(d)
	}
	return out
}

// appendValues appends the stored values of every column of d, in column order.
func (t table[D]) appendValues(dst []any, d *D) []any {
	for _, c := range t.columns {
		dst = append(dst, c.value(d))
	}
	return dst
}

// values are appendValues into a new slice.
func (t table[D]) values(d *D) []any { return t.appendValues(make([]any, 0, len(t.columns)), d) }

// upsertSQL inserts one row or, when its key exists, overwrites every other column.
func (t table[D]) upsertSQL() string { return upsertSQL(t.name, t.names, t.key...) }

// selectSQL is "SELECT <t's columns> FROM <table>", for a WHERE to follow: with only or without,
// the columns a read wants.
func (t table[D]) selectSQL() string { return "SELECT " + t.list("") + " FROM " + t.name }

// insertInto is "INSERT INTO <table> (<t's columns>)", for the VALUES or SELECT that follows
// (with only, a statement that leaves the other columns to their defaults).
func (t table[D]) insertInto() string { return "INSERT INTO " + t.name + " (" + t.list("") + ")" }

// replaceOneSQL is insertOneSQL as SQLite's REPLACE: the row holding the key, if any, is deleted
// first.
func (t table[D]) replaceOneSQL() string {
	return "REPLACE INTO " + t.name + " (" + t.list("") + ") VALUES " + placeholders(len(t.names))
}

// insertOneSQL inserts one row of every column of t, bound in column order (values).
func (t table[D]) insertOneSQL() string {
	return t.insertInto() + " VALUES " + placeholders(len(t.names))
}

// onConflict is the clause that turns an insert into an upsert on t's key: " ON CONFLICT
// (<key>) DO UPDATE SET " and set.
func (t table[D]) onConflict(set string) string {
	return " ON CONFLICT (" + strings.Join(t.key, ", ") + ") DO UPDATE SET " + set
}

// onConflictAdd is onConflict adding the inserted row's counters to the stored row's: a bump of
// a count row, "n = t.n + excluded.n".
func (t table[D]) onConflictAdd(counters ...string) string {
	set := make([]string, len(counters))
	for i, c := range counters {
		t.only(c) // panics on a column t lacks
		set[i] = c + " = " + t.name + "." + c + " + excluded." + c
	}
	return t.onConflict(strings.Join(set, ", "))
}

// onConflictKeep is onConflict rewriting col with its stored value: a claim, whose row is then
// RETURNed whether it was inserted or already there (DO NOTHING returns no row).
func (t table[D]) onConflictKeep(col string) string {
	t.only(col)
	return t.onConflict(col + " = " + t.name + "." + col)
}

// onConflictSet is onConflict overwriting cols with the inserted row's.
func (t table[D]) onConflictSet(cols ...string) string {
	set := make([]string, len(cols))
	for i, c := range cols {
		t.only(c)
		set[i] = c + " = excluded." + c
	}
	return t.onConflict(strings.Join(set, ", "))
}

// The encodings. Each constructor takes the column's name and the field it stores.

// textColumn stores a string (or a string type: kinds, phases, roles) as TEXT.
func textColumn[D any, T ~string](name string, field func(*D) *T) column[D] {
	return column[D]{name: name,
		scan: func(d *D) any {
			if p, ok := any(field(d)).(*string); ok {
				return p // a plain string: the driver assigns it directly
			}
			return textScan[T]{field(d)}
		},
		value: func(d *D) any { return string(*field(d)) }}
}

// integerColumn stores an int64 as BIGINT.
func integerColumn[D any](name string, field func(*D) *int64) column[D] {
	return column[D]{name: name, scan: func(d *D) any { return field(d) }, value: func(d *D) any { return *field(d) }}
}

// intColumn stores an int as BIGINT.
func intColumn[D any](name string, field func(*D) *int) column[D] {
	return column[D]{name: name, scan: func(d *D) any { return intScan{field(d)} }, value: func(d *D) any { return int64(*field(d)) }}
}

// booleanColumn stores a bool as BOOLEAN.
func booleanColumn[D any](name string, field func(*D) *bool) column[D] {
	return column[D]{name: name, scan: func(d *D) any { return field(d) }, value: func(d *D) any { return *field(d) }}
}

// microsColumn stores a time as microseconds since the epoch (BIGINT NOT NULL); it reads back
// in UTC.
func microsColumn[D any](name string, field func(*D) *time.Time) column[D] {
	return column[D]{name: name, scan: func(d *D) any { return microsScan{field(d)} },
		value: func(d *D) any { return micros(*field(d)) }}
}

// optionalMicrosColumn stores an optional time as microseconds, NULL for nil.
func optionalMicrosColumn[D any](name string, field func(*D) **time.Time) column[D] {
	return column[D]{name: name, scan: func(d *D) any { return optionalMicrosScan{field(d)} },
		value: func(d *D) any { return microsPtr(*field(d)) }}
}

// rawJSONColumn stores a JSON value as its bytes (TEXT), NULL when it is empty.
func rawJSONColumn[D any](name string, field func(*D) *json.RawMessage) column[D] {
	return column[D]{name: name, scan: func(d *D) any { return rawScan{field(d)} },
		value: func(d *D) any { return rawPtr(*field(d)) }}
}

// objectColumn stores a JSON object as its bytes (TEXT NOT NULL), "{}" when it is empty.
func objectColumn[D any](name string, field func(*D) *json.RawMessage) column[D] {
	return column[D]{name: name, scan: func(d *D) any { return rawScan{field(d)} },
		value: func(d *D) any {
			if raw := *field(d); len(raw) > 0 {
				return string(raw)
			}
			return "{}"
		}}
}

// customColumn stores a field that has no column type of its own (a list, a struct) as text,
// NULL when encode returns nil. encode and decode see the whole value, so their errors can name
// it: a read scans the columns in order, and decode sees those before its own already assigned.
// decode is called for every row, NULL included (nil text), and must assign its field each time:
// eachOf reuses one value for every row. An error of encode surfaces from the statement.
func customColumn[D any](name string, encode func(d *D) (*string, error), decode func(d *D, text *string) error) column[D] {
	return column[D]{name: name,
		scan:  func(d *D) any { return customScan[D]{d, decode} },
		value: func(d *D) any { return customValue[D]{d, encode} }}
}

type customValue[D any] struct {
	d      *D
	encode func(*D) (*string, error)
}

func (v customValue[D]) Value() (driver.Value, error) {
	text, err := v.encode(v.d)
	if err != nil || text == nil {
		return nil, err
	}
	return *text, nil
}

type customScan[D any] struct {
	d      *D
	decode func(*D, *string) error
}

func (s customScan[D]) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		return s.decode(s.d, nil)
	case string:
		return s.decode(s.d, &v)
	case []byte:
		text := string(v)
		return s.decode(s.d, &text)
	}
	return fmt.Errorf("store: encoded column holds %T", src)
}

// The scan destinations of the encodings that are not a Go type database/sql assigns itself.

type textScan[T ~string] struct{ p *T }

func (s textScan[T]) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*s.p = T(v)
	case []byte:
		*s.p = T(v)
	case nil:
		*s.p = ""
	default:
		return fmt.Errorf("store: text column holds %T", src)
	}
	return nil
}

type intScan struct{ p *int }

func (s intScan) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("store: integer column holds %T", src)
	}
	*s.p = int(v)
	return nil
}

type microsScan struct{ p *time.Time }

func (s microsScan) Scan(src any) error {
	v, ok := src.(int64)
	if !ok {
		return fmt.Errorf("store: time column holds %T", src)
	}
	*s.p = fromMicros(v)
	return nil
}

type optionalMicrosScan struct{ p **time.Time }

func (s optionalMicrosScan) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*s.p = nil
	case int64:
		t := fromMicros(v)
		*s.p = &t
	default:
		return fmt.Errorf("store: time column holds %T", src)
	}
	return nil
}

// rawScan reads a JSON column: NULL as nil, anything else as a copy of its bytes (a driver may
// reuse the buffer it hands over).
type rawScan struct{ p *json.RawMessage }

func (s rawScan) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*s.p = nil
	case string:
		*s.p = json.RawMessage(v)
	case []byte:
		*s.p = append(json.RawMessage(nil), v...)
	default:
		return fmt.Errorf("store: JSON column holds %T", src)
	}
	return nil
}

var (
	_ sql.Scanner = textScan[string]{}
	_ sql.Scanner = intScan{}
	_ sql.Scanner = microsScan{}
	_ sql.Scanner = optionalMicrosScan{}
	_ sql.Scanner = rawScan{}
	_ sql.Scanner = customScan[struct{}]{}

	_ driver.Valuer = customValue[struct{}]{}
)
