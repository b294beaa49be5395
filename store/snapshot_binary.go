package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The binary snapshot encoding is what SQLite stores (as a BLOB) for a snapshot the compact
// encoding could hold exactly. It is the compact encoding's content without JSON: strings are
// length-prefixed bytes, numbers and times varints, a message names its turn by the turn's index
// in the snapshot, and raw JSON (settings, bindings) is kept as the bytes it was. A 20-turn,
// 100-message snapshot takes about half the compact JSON's bytes (three overflow pages fewer per
// fork) and its encoding a tenth of encoding/json's reflective walk. PostgreSQL keeps the compact
// JSON: its TEXT column cannot hold arbitrary bytes.
//
// Decoding returns exactly what was encoded: strings are not made valid UTF-8 and raw JSON is
// not compacted (the JSON encodings do both), and a raw JSON null comes back as nil, as from the
// other encodings. The snapshot hash is indifferent to either (it canonicalises both).

// binarySnapshotMagic starts every binary snapshot; neither JSON encoding can start with it.
const binarySnapshotMagic = 0x01

// binarySnapshotFormat is the layout version after the magic byte: the session's base fields
// only. binarySnapshotFormatLater adds the session's later fields that are set (snapshot_session.go);
// a snapshot without any is written in the first format, in the bytes it always had.
const (
	binarySnapshotFormat      = 1
	binarySnapshotFormatLater = 2
)

var errBinarySnapshot = errors.New("truncated or malformed binary snapshot")

// appendBinarySnapshot encodes s, which compactable must have accepted.
func appendBinarySnapshot(b []byte, s forkengine.Snapshot) []byte {
	later := sessionSnapshot.laterSet(&s.Session)
	format := byte(binarySnapshotFormat)
	if later > 0 {
		format = binarySnapshotFormatLater
	}
	b = append(b, binarySnapshotMagic, format)
	b = binary.AppendVarint(b, int64(s.Version))
	b = sessionSnapshot.appendBinary(b, &s.Session, later)
	if s.Turns == nil && s.Messages == nil {
		return append(b, 0) // session only: nil slices, as a committed operation keeps it
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(len(s.Turns)))
	index := make(map[string]int, len(s.Turns))
	for i, t := range s.Turns {
		index[t.ID] = i
		b = appendStrings(b, t.ID)
		b = binary.AppendVarint(b, t.Sequence)
		b = appendStrings(b, string(t.Phase), string(t.Outcome), t.Origin)
		b = binary.AppendVarint(b, micros(t.StartedAt))
		b = appendMicrosPtr(b, microsPtr(t.SettledAt))
		b = binary.AppendVarint(b, micros(t.UpdatedAt))
		b = appendStrings(b, t.ProviderTurnID)
		b = appendRaw(b, t.ProviderTurnBinding)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Messages)))
	for _, m := range s.Messages {
		// 1 + the index of the message's turn; 0 and the id for a turn the snapshot lacks.
		if i, ok := index[m.TurnID]; ok {
			b = binary.AppendUvarint(b, uint64(i)+1)
		} else {
			b = appendStrings(binary.AppendUvarint(b, 0), m.TurnID)
		}
		b = appendStrings(b, m.ID)
		b = binary.AppendVarint(b, m.Position)
		b = appendStrings(b, string(m.Role), m.Content)
		b = binary.AppendVarint(b, micros(m.CreatedAt))
	}
	return b
}

func appendStrings(b []byte, values ...string) []byte {
	for _, v := range values {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

// appendRaw writes nil (and an empty value, which the JSON encodings also make nil) as 0, any
// other value as 1 + its length and its bytes.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(raw))+1)
	return append(b, raw...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendMicrosPtr(b []byte, us *int64) []byte {
	if us == nil {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), *us)
}

// binaryReader decodes one binary snapshot. Strings are substrings of the stored text, so they
// cost no copies; the first malformed field sets err and every later read returns zero values.
type binaryReader struct {
	text string
	at   int
	err  error
}

func (r *binaryReader) fail() {
	if r.err == nil {
		r.err = errBinarySnapshot
	}
	r.at = len(r.text)
}

func (r *binaryReader) byte() byte {
	if r.at >= len(r.text) {
		r.fail()
		return 0
	}
	r.at++
	return r.text[r.at-1]
}

func (r *binaryReader) uvarint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		c := r.byte()
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.fail()
	return 0
}

func (r *binaryReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

func (r *binaryReader) bytes(n uint64) string {
	if n > uint64(len(r.text)-r.at) {
		r.fail()
		return ""
	}
	s := r.text[r.at : r.at+int(n)]
	r.at += int(n)
	return s
}

func (r *binaryReader) str() string { return r.bytes(r.uvarint()) }

func (r *binaryReader) raw() json.RawMessage {
	n := r.uvarint()
	if n == 0 {
		return nil
	}
	return nullToNil(json.RawMessage(r.bytes(n - 1)))
}

func (r *binaryReader) microsPtr() *int64 {
	if r.byte() == 0 {
		return nil
	}
	v := r.varint()
	return &v
}

// count reads a slice length, refusing one the remaining bytes cannot hold (each element takes
// at least min bytes), so a corrupt length cannot make a huge allocation.
func (r *binaryReader) count(min int) int {
	n := r.uvarint()
	if n > uint64((len(r.text)-r.at)/min) {
		r.fail()
		return 0
	}
	return int(n)
}

// decodeBinarySnapshot decodes text, which starts with binarySnapshotMagic.
func decodeBinarySnapshot(text string) (forkengine.Snapshot, error) {
	r := &binaryReader{text: text, at: 1}
	format := r.byte()
	if format != binarySnapshotFormat && format != binarySnapshotFormatLater {
		return forkengine.Snapshot{}, fmt.Errorf("binary snapshot format %d is not known", format)
	}
	s := forkengine.Snapshot{Version: int(r.varint())}
	ss := &s.Session
	sessionSnapshot.readBinary(r, ss, format == binarySnapshotFormatLater)
	if r.byte() == 1 {
		s.Turns = make([]forkengine.Turn, r.count(9))
		for i := range s.Turns {
			t := &s.Turns[i]
			t.WorkspaceID, t.SessionID, t.ID, t.Sequence = ss.WorkspaceID, ss.ID, r.str(), r.varint()
			t.Phase, t.Outcome, t.Origin = forkengine.TurnPhase(r.str()), forkengine.TurnOutcome(r.str()), r.str()
			t.StartedAt, t.SettledAt, t.UpdatedAt = fromMicros(r.varint()), fromMicrosPtr(r.microsPtr()), fromMicros(r.varint())
			t.ProviderTurnID, t.ProviderTurnBinding = r.str(), r.raw()
		}
		s.Messages = make([]forkengine.Message, r.count(6))
		for i := range s.Messages {
			m := &s.Messages[i]
			m.WorkspaceID, m.SessionID = ss.WorkspaceID, ss.ID
			switch ref := r.uvarint(); {
			case ref == 0:
				m.TurnID = r.str()
			case ref <= uint64(len(s.Turns)):
				m.TurnID = s.Turns[ref-1].ID
			default:
				r.fail()
			}
			m.ID, m.Position = r.str(), r.varint()
			m.Role, m.Content, m.CreatedAt = forkengine.MessageRole(r.str()), r.str(), fromMicros(r.varint())
		}
	}
	if r.err == nil && r.at != len(text) {
		r.err = errBinarySnapshot
	}
	if r.err != nil {
		return forkengine.Snapshot{}, r.err
	}
	return s, nil
}
