package forkengine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strings"
	"time"
	"unicode/utf8"
)

// snapshotHashVersion prefixes hashes made by snapshotHash. Hashes without it are
// jsonSnapshotHash's, from before; both verify.
const snapshotHashVersion = "2:"

// snapshotHash is the versioned sha256 of a canonical field-by-field encoding of s: every
// string length-prefixed, every time as its instant, every JSON value compacted. Commit
// recomputes it to prove the frozen history it copies is the one prepared. It hashes what a
// store's round trip keeps (instants, compacted JSON, strings with invalid UTF-8 bytes replaced
// as encoding/json does), so a snapshot read back hashes like the one frozen. It replaced the
// sha256 of json.Marshal(s), which spent a tenth of a fork's CPU on reflection and escaping.
func snapshotHash(s Snapshot) (string, error) {
	// The buffer is flushed at 4 KB; room for one long string beyond that saves regrowing it.
	w := snapshotHasher{h: sha256.New(), buf: make([]byte, 0, 8<<10)}
	w.int(int64(s.Version))
	w.session(s.Session)
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
	if w.err != nil {
		return "", fmt.Errorf("hash snapshot: %w", w.err)
	}
	w.flush()
	return snapshotHashVersion + hex.EncodeToString(w.h.Sum(nil)), nil
}

// snapshotMatches reports whether s hashes to want with the scheme want was made with.
func snapshotMatches(s Snapshot, want string) (bool, error) {
	got, err := snapshotHash(s)
	if !strings.HasPrefix(want, snapshotHashVersion) {
		got, err = jsonSnapshotHash(s)
	}
	return got == want, err
}

// snapshotHasher buffers the canonical encoding and feeds it to h in blocks.
type snapshotHasher struct {
	h   hash.Hash
	buf []byte
	err error
}

func (w *snapshotHasher) session(s Session) {
	w.str(s.WorkspaceID, s.ID, string(s.Kind), s.Provider, s.ProviderSessionID, s.Title, s.RailSectionKey, s.Cwd, s.Model)
	w.json(s.Settings)
	w.bool(s.Visible)
	w.time(s.CreatedAt)
	w.time(s.UpdatedAt)
	w.timePtr(s.DeletedAt)
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
	w.str(out.String())
}

func (w *snapshotHasher) flush() {
	w.h.Write(w.buf) // a hash.Hash never returns an error
	w.buf = w.buf[:0]
}
