package store

import (
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The columns of a message's typed parts and a turn's details (the migration "typed message
// parts and turn details"). Each holds its value's JSON as TEXT NOT NULL, and the empty string
// for a value that was never given: every row stored before the columns existed reads as
// absent, which for a message means plain text (its one text part is its content).

// encodedColumn stores *field as JSON, the empty string when absent says it is. A read decodes the JSON and
// passes the value through check, which refuses what this server cannot present.
func encodedColumn[D, T any](name string, field func(*D) *T, absent func(T) bool, check func(T) error) column[D] {
	return column[D]{name: name,
		scan: func(d *D) any { return encodedScan[T]{field(d), check} },
		value: func(d *D) any {
			v := *field(d)
			if absent(v) {
				return ""
			}
			raw, err := json.Marshal(v)
			if err != nil {
				panic(fmt.Sprintf("store: encode %s: %v", name, err)) // the types are plain data: never fails
			}
			return string(raw)
		}}
}

type encodedScan[T any] struct {
	p     *T
	check func(T) error
}

func (s encodedScan[T]) Scan(src any) error {
	var raw []byte
	switch v := src.(type) {
	case nil:
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default:
		return fmt.Errorf("store: cannot read %T as JSON text", src)
	}
	var out T
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			return fmt.Errorf("store: decode stored JSON: %w", err)
		}
		if s.check != nil {
			if err := s.check(out); err != nil {
				return err
			}
		}
	}
	*s.p = out
	return nil
}

func isNil[T any](v *T) bool       { return v == nil }
func isNilSlice[T any](v []T) bool { return v == nil }

// checkStoredParts refuses a stored part of a kind this server does not know (a row written by
// a newer server): presenting it could pass references a fork cannot map (typed_reference_unknown).
func checkStoredParts(parts []forkengine.MessagePart) error {
	for _, p := range parts {
		if !p.Kind.Valid() {
			return forkengine.ReasonErrorf(forkengine.CodeForkConflict, forkengine.ReasonTypedReferenceUnknown,
				"a stored message part has kind %q, which this server does not know", p.Kind)
		}
	}
	return nil
}

var (
	messagePartsColumn = encodedColumn("parts", func(m *forkengine.Message) *[]forkengine.MessagePart { return &m.Parts },
		isNilSlice[forkengine.MessagePart], checkStoredParts)
	turnErrorColumn = encodedColumn("turn_error", func(t *forkengine.Turn) **forkengine.TurnError { return &t.Error },
		isNil[forkengine.TurnError], nil)
	fileChangesColumn = encodedColumn("file_changes", func(t *forkengine.Turn) *[]forkengine.FileChange { return &t.FileChanges },
		isNilSlice[forkengine.FileChange], nil)
	completedCommandColumn = encodedColumn("completed_command", func(t *forkengine.Turn) **forkengine.CompletedCommand { return &t.CompletedCommand },
		isNil[forkengine.CompletedCommand], nil)
)

// richMessagesStatements add the columns (the migration "typed message parts and turn details").
var richMessagesStatements = []string{
	`ALTER TABLE messages ADD COLUMN parts TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE turns ADD COLUMN turn_error TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE turns ADD COLUMN file_changes TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE turns ADD COLUMN completed_command TEXT NOT NULL DEFAULT ''`,
}
