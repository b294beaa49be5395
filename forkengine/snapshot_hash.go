package forkengine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// snapshotHashVersion prefixes hashes made by snapshotHash. Hashes without it are
// jsonSnapshotHash's, from before; both verify.
const snapshotHashVersion = "2:"

// SnapshotHash is the hash an operation prepared with snapshot s stores, and commit verifies.
// Tests that write operations as an earlier forkgraph did use it.
func SnapshotHash(s Snapshot) (string, error) { return snapshotHash(s) }

// snapshotHash is the versioned sha256 of a canonical field-by-field encoding of s: every
// string length-prefixed, every time as its instant, every JSON value compacted. Commit
// recomputes it to prove the frozen history it copies is the one prepared. It hashes what a
// store's round trip keeps (instants, compacted JSON, strings with invalid UTF-8 bytes replaced
// as encoding/json does), so a snapshot read back hashes like the one frozen. It replaced the
// sha256 of json.Marshal(s), which spent a tenth of a fork's CPU on reflection and escaping.
func snapshotHash(s Snapshot) (string, error) {
	return hashSnapshot(s, nil)
}

// hashSnapshot is snapshotHash with each JSON value rewritten by rawJSON first (nil: as it is).
func hashSnapshot(s Snapshot, rawJSON func([]byte) []byte) (string, error) {
	// The buffer is flushed at 4 KB; room for one long string beyond that saves regrowing it.
	w := snapshotHasher{h: sha256.New(), buf: make([]byte, 0, 8<<10), rawJSON: rawJSON}
	w.int(int64(s.Version))
	if s.Version >= 2 {
		// The session as encoding/json writes it: every field, so one added to Session is hashed
		// without a line here (version 1 keeps its field list, which its hashes were made with).
		raw, err := json.Marshal(s.Session)
		if err != nil {
			return "", fmt.Errorf("hash snapshot session: %w", err)
		}
		w.str(string(raw))
	} else {
		w.session(s.Session)
	}
	w.int(int64(len(s.Turns)))
	for _, t := range s.Turns {
		w.turn(t)
	}
	w.int(int64(len(s.Messages)))
	for _, m := range s.Messages {
		w.str(m.WorkspaceID, m.SessionID, m.TurnID, m.ID)
		w.int(m.Position)
		w.str(string(m.Role), m.Content)
		w.time(m.CreatedAt)
	}
	if s.Version >= 2 { // the reference; version 1 hashes stay what they were
		w.reference(s)
	}
	if w.err != nil {
		return "", fmt.Errorf("hash snapshot: %w", w.err)
	}
	w.flush()
	return snapshotHashVersion + hex.EncodeToString(w.h.Sum(nil)), nil
}

// snapshotMatches reports whether s hashes to want with the scheme want was made with.
//
// Stores before this one kept a snapshot's JSON values HTML-escaped (encoding/json writes &, <,
// >, U+2028 and U+2029 as \u0026 and so on), so a snapshot they wrote reads back with other bytes
// in its settings and bindings than the values it was frozen and hashed with, and its commit
// failed for ever. Such a snapshot matches when it hashes to want with those escapes undone:
// each one may stand for the character itself or for an escape the client wrote, so with up to
// maxAmbiguousEscapes of them every choice is tried (all undone first, the common case), and
// beyond that only all undone.
func snapshotMatches(s Snapshot, want string) (bool, error) {
	if !strings.HasPrefix(want, snapshotHashVersion) {
		got, err := jsonSnapshotHash(s)
		return got == want, err
	}
	got, err := snapshotHash(s)
	if err != nil || got == want {
		return got == want, err
	}
	n := countHTMLEscapes(s)
	if n == 0 {
		return false, nil
	}
	all := uint64(1)<<min(n, 64) - 1
	masks := []uint64{all}
	if n <= maxAmbiguousEscapes {
		for mask := uint64(1); mask < all; mask++ {
			masks = append(masks, mask)
		}
	}
	for _, mask := range masks {
		i := 0
		got, err = hashSnapshot(s, func(raw []byte) []byte {
			return unescapeHTMLWhere(raw, func() bool {
				undo := i >= 64 || mask&(1<<i) != 0
				i++
				return undo
			})
		})
		if err != nil || got == want {
			return got == want, err
		}
	}
	return false, nil
}

// maxAmbiguousEscapes bounds the escapes whose every reading snapshotMatches tries: 2^10 hashes
// of the snapshot at most, a few tens of milliseconds, once per commit of such an operation.
const maxAmbiguousEscapes = 10

// snapshotHasher buffers the canonical encoding and feeds it to h in blocks. rawJSON, when set,
// rewrites each compacted JSON value before it is hashed.
type snapshotHasher struct {
	h       hash.Hash
	buf     []byte
	err     error
	rawJSON func([]byte) []byte
}

// session hashes the fields of a version 1 snapshot's session: the base fields, in their snapshot
// places (session_fields.go), each as its kind is hashed everywhere else. Later fields are not
// hashed: version 1 hashes were made without them.
func (w *snapshotHasher) session(s Session) {
	v := reflect.ValueOf(&s).Elem()
	for _, f := range sessionFields.snapshot {
		if !f.Base() {
			break // in place order, so every later one is too
		}
		field := v.Field(f.Index)
		switch f.Kind {
		case SnapshotText:
			w.str(field.String())
		case SnapshotJSON:
			w.json(field.Bytes())
		case SnapshotBool:
			w.bool(field.Bool())
		case SnapshotTime:
			w.time(*field.Addr().Interface().(*time.Time))
		case SnapshotOptionalTime:
			w.timePtr(field.Interface().(*time.Time))
		}
	}
}

// reference hashes the fields of a version 2 snapshot.
func (w *snapshotHasher) reference(s Snapshot) {
	w.bool(s.Boundary != nil)
	if s.Boundary != nil {
		w.turn(*s.Boundary)
	}
	w.int(int64(len(s.Segments)))
	for _, g := range s.Segments {
		w.str(g.OwnerWorkspaceID, g.OwnerSessionID)
		w.int(g.From)
		w.int(g.To)
		w.int(g.Watermark)
	}
	if slices.ContainsFunc(s.Segments, func(g HistorySegment) bool { return len(g.Via) > 0 }) {
		// only then: a snapshot frozen before segments had a Via hashes as it always did
		w.str("segment vias")
		for _, g := range s.Segments {
			w.int(int64(len(g.Via)))
			w.str(g.Via...)
		}
	}
	w.int(int64(s.PrefixTurns))
	w.int(int64(s.BoundTurns))
	w.int(int64(len(s.Overrides)))
	for _, t := range s.Overrides {
		w.turn(t)
	}
	if s.AuditBound != 0 { // only then: a snapshot frozen before it hashes as it did
		w.str("audit bound")
		w.int(s.AuditBound)
	}
	if s.PrefixMessages != 0 { // likewise
		w.str("prefix messages")
		w.int(s.PrefixMessages)
	}
	if s.PrefixCounted { // likewise: a snapshot frozen before it hashes as it did
		w.str("prefix counted")
	}
	if len(s.AuditMessages) > 0 {
		w.str("audit messages")
		w.int(int64(len(s.AuditMessages)))
		for _, m := range s.AuditMessages {
			w.str(m.WorkspaceID, m.SessionID, m.ID, m.Kind, m.Content)
			w.int(m.AfterSequence)
			w.time(m.CreatedAt)
		}
	}
	if len(s.Interactions) == 0 {
		return // a snapshot without any hashes as snapshots did before interactions
	}
	w.str("interactions")
	w.int(int64(len(s.Interactions)))
	for _, f := range s.Interactions {
		i := f.Interaction
		w.int(f.Sequence)
		w.str(i.WorkspaceID, i.SessionID, i.TurnID, i.ID, i.RequestID, string(i.Kind), string(i.State))
		w.json(i.Prompt)
		w.json(i.Answer)
		w.time(i.CreatedAt)
		w.time(i.UpdatedAt)
		w.timePtr(i.AnsweredAt)
	}
}

func (w *snapshotHasher) turn(t Turn) {
	w.str(t.WorkspaceID, t.SessionID, t.ID)
	w.int(t.Sequence)
	w.str(string(t.Phase), string(t.Outcome), t.Origin)
	w.time(t.StartedAt)
	w.timePtr(t.SettledAt)
	w.time(t.UpdatedAt)
	w.str(t.ProviderTurnID)
	w.json(t.ProviderTurnBinding)
}

func (w *snapshotHasher) int(v int64) {
	w.buf = binary.AppendVarint(w.buf, v)
	if len(w.buf) >= 4096 {
		w.flush()
	}
}

func (w *snapshotHasher) bool(v bool) {
	if v {
		w.int(1)
	} else {
		w.int(0)
	}
}

// str writes each string length-prefixed, each invalid UTF-8 byte as U+FFFD (as encoding/json
// writes it, so a stored and re-read string hashes the same).
func (w *snapshotHasher) str(values ...string) {
	for _, s := range values {
		if !utf8.ValidString(s) {
			s = replaceInvalidBytes(s)
		}
		w.int(int64(len(s)))
		w.buf = append(w.buf, s...)
	}
}

// replaceInvalidBytes rewrites s rune by rune: ranging over a string yields U+FFFD for each
// invalid byte.
func replaceInvalidBytes(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

func (w *snapshotHasher) time(t time.Time) {
	w.int(t.Unix())
	w.int(int64(t.Nanosecond()))
}

func (w *snapshotHasher) timePtr(t *time.Time) {
	w.bool(t != nil)
	if t != nil {
		w.time(*t)
	}
}

// json writes a JSON value compacted; nil hashes like the literal null, as encoding/json
// writes it.
func (w *snapshotHasher) json(raw json.RawMessage) {
	if raw == nil {
		raw = json.RawMessage("null")
	}
	var out bytes.Buffer
	if err := json.Compact(&out, raw); err != nil && w.err == nil {
		w.err = err
	}
	if w.rawJSON != nil {
		w.str(string(w.rawJSON(out.Bytes())))
		return
	}
	w.str(out.String())
}

// htmlEscapes are the escapes encoding/json writes for HTML safety, and the bytes each stands for.
var htmlEscapes = map[string]string{`\u0026`: "&", `\u003c`: "<", `\u003e`: ">", `\u2028`: "\u2028", `\u2029`: "\u2029"}

// countHTMLEscapes counts the escapes unescapeHTMLWhere may undo in the JSON values of s.
func countHTMLEscapes(s Snapshot) int {
	n := 0
	count := func(raw json.RawMessage) {
		unescapeHTMLWhere(raw, func() bool { n++; return false })
	}
	count(s.Session.Settings)
	for _, t := range s.Turns {
		count(t.ProviderTurnBinding)
	}
	if s.Version >= 2 { // in the order reference hashes them
		if s.Boundary != nil {
			count(s.Boundary.ProviderTurnBinding)
		}
		for _, t := range s.Overrides {
			count(t.ProviderTurnBinding)
		}
	}
	return n
}

// unescapeHTML writes every HTML escape of a JSON value (htmlEscapes) as the character it stands
// for; every other escape, an escaped backslash before "u0026" included, is kept.
func unescapeHTML(raw []byte) []byte {
	return unescapeHTMLWhere(raw, func() bool { return true })
}

// unescapeHTMLWhere is unescapeHTML for the HTML escapes undo says yes to; it is asked once for
// each, in order.
func unescapeHTMLWhere(raw []byte, undo func() bool) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			out = append(out, raw[i])
			continue
		}
		if i+6 <= len(raw) {
			if plain, ok := htmlEscapes[string(raw[i:i+6])]; ok {
				if undo() {
					out = append(out, plain...)
				} else {
					out = append(out, raw[i:i+6]...)
				}
				i += 5
				continue
			}
		}
		out = append(out, raw[i], raw[i+1])
		i++
	}
	return out
}

func (w *snapshotHasher) flush() {
	w.h.Write(w.buf) // a hash.Hash never returns an error
	w.buf = w.buf[:0]
}
