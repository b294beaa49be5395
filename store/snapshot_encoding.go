package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A new snapshot is written in one encoding per dialect: the binary encoding of
// snapshot_binary.go on SQLite, the compact JSON encoding below on PostgreSQL. Either is used only
// when it decodes to exactly the snapshot given (compactable); a snapshot that neither holds (a
// reference to shared history, version 2, whose JSON is a few hundred bytes anyway; a time finer
// than a microsecond; a turn of another session) is written as encoding/json of
// forkengine.Snapshot, its version 1 or 2. Version 1 was the only encoding once: every turn and
// message repeats its workspace and session id under long Go field names, and every time is an
// RFC 3339 string, so a 20-turn, 100-message snapshot took about 40 KB (ten overflow pages per
// fork) and most of its encoding CPU. The compact encoding writes short keys, times as Unix
// microseconds (the store's own precision) and each turn's and message's workspace and session
// only through the snapshot's session, whose part of both encodings is derived from Session's tags
// (snapshot_session.go). Every encoding ever written decodes (decodeSnapshot). The
// snapshot hash is the engine's, over its own canonical encoding, so it does not depend on how
// the store keeps the bytes.

// compactSnapshotPrefix starts every compact snapshot and never starts a version 1 one, which
// begins with {"version".
const compactSnapshotPrefix = `{"c":1,`

type compactSnapshot struct {
	C        int              `json:"c"`
	Version  int              `json:"v"`
	Session  any              `json:"s"` // sessionSnapshot's compact struct (snapshot_session.go)
	Turns    []compactTurn    `json:"t,omitempty"`
	Messages []compactMessage `json:"m,omitempty"`
	// SessionOnly marks a snapshot without a transcript (nil turns and messages, as a committed
	// operation keeps it), so it decodes to nil slices rather than empty ones.
	SessionOnly bool `json:"so,omitempty"`
}

type compactTurn struct {
	ID                  string          `json:"i"`
	Sequence            int64           `json:"q"`
	Phase               string          `json:"ph"`
	Outcome             string          `json:"o"`
	Origin              string          `json:"or"`
	StartedAt           int64           `json:"sa"`
	SettledAt           *int64          `json:"st,omitempty"`
	UpdatedAt           int64           `json:"ua"`
	ProviderTurnID      string          `json:"pt"`
	ProviderTurnBinding json.RawMessage `json:"b"`
}

type compactMessage struct {
	TurnID    string `json:"t"`
	ID        string `json:"i"`
	Position  int64  `json:"p"`
	Role      string `json:"r"`
	Content   string `json:"c"`
	CreatedAt int64  `json:"a"`
}

// encodeSnapshot is the stored text of op's snapshot: compact when that decodes exactly.
func encodeSnapshot(op forkengine.ForkOperation) (string, error) {
	var raw []byte
	var err error
	if compact, ok := compactOf(op.Snapshot); ok {
		raw, err = marshalVerbatim(compact)
	} else {
		raw, err = marshalVerbatim(op.Snapshot)
	}
	if err != nil {
		return "", fmt.Errorf("encode snapshot of operation %s: %w", op.ID, err)
	}
	return string(raw), nil
}

// encodedSnapshot is a snapshot as it is stored: text is what a read of the column returns (and
// what the cache keeps), value what is bound to write it.
type encodedSnapshot struct {
	text  string
	value any
}

// encodeSnapshotFor encodes op's snapshot for dialect d: binary (as a BLOB) on SQLite when the
// compact content holds it exactly, otherwise as encodeSnapshot does.
func encodeSnapshotFor(d dialect, op forkengine.ForkOperation) (encodedSnapshot, error) {
	if d.binarySnapshots && compactable(op.Snapshot) {
		raw := appendBinarySnapshot(make([]byte, 0, binarySnapshotSize(op.Snapshot)), op.Snapshot)
		return encodedSnapshot{text: string(raw), value: raw}, nil
	}
	text, err := encodeSnapshot(op)
	return encodedSnapshot{text: text, value: text}, err
}

// binarySnapshotSize estimates s's binary encoding from above (the strings' bytes plus up to 10
// bytes for each number and length), so it is normally built in one allocation.
func binarySnapshotSize(s forkengine.Snapshot) int {
	n := 20 + sessionSnapshot.size(&s.Session) // and the magic, format, version and counts
	for _, t := range s.Turns {
		n += 80 + len(t.ID) + len(t.Phase) + len(t.Outcome) + len(t.Origin) + len(t.ProviderTurnID) + len(t.ProviderTurnBinding)
	}
	for _, m := range s.Messages {
		n += 40 + len(m.ID) + len(m.Role) + len(m.Content)
	}
	return n
}

// decodeSnapshot decodes a stored snapshot of either encoding the way every read returns it.
func decodeSnapshot(text string) (forkengine.Snapshot, error) {
	if len(text) > 0 && text[0] == binarySnapshotMagic {
		return decodeBinarySnapshot(text)
	}
	if !strings.HasPrefix(text, compactSnapshotPrefix) {
		var s forkengine.Snapshot
		if err := json.Unmarshal([]byte(text), &s); err != nil {
			return s, err
		}
		dropSnapshotNulls(&s)
		return s, nil
	}
	c := compactSnapshot{Session: sessionSnapshot.newCompact()}
	if err := json.Unmarshal([]byte(text), &c); err != nil {
		return forkengine.Snapshot{}, err
	}
	s := c.domain()
	dropSnapshotNulls(&s)
	return s, nil
}

// compactable reports whether the compact encodings hold s exactly: a version 1 snapshot, every
// time a whole UTC microsecond, every turn and message of the snapshot's session, and turns and
// messages either both nil (a session-only snapshot) or both present.
func compactable(s forkengine.Snapshot) bool {
	if s.Shared() || s.Segments != nil || s.Overrides != nil || s.PrefixTurns != 0 || s.BoundTurns != 0 || s.Interactions != nil || s.AuditMessages != nil || s.PrefixMessages != 0 || s.PrefixCounted {
		return false // a reference (version 2): a few hundred bytes of JSON, which keeps every field
	}
	ss := s.Session
	if !sessionSnapshot.exactTimes(&ss) {
		return false
	}
	for _, t := range s.Turns {
		if t.WorkspaceID != ss.WorkspaceID || t.SessionID != ss.ID ||
			!exactMicros(t.StartedAt) || !exactMicros(t.UpdatedAt) || !exactMicrosPtr(t.SettledAt) ||
			t.Error != nil || t.FileChanges != nil || t.CompletedCommand != nil {
			return false // the compact forms predate a turn's details: the verbatim JSON keeps them
		}
	}
	for _, m := range s.Messages {
		if m.WorkspaceID != ss.WorkspaceID || m.SessionID != ss.ID || !exactMicros(m.CreatedAt) || m.Parts != nil {
			return false // nor typed parts
		}
	}
	return (s.Turns == nil) == (s.Messages == nil)
}

// compactOf converts s, or reports that the compact form would not decode back to s exactly
// (compactable).
func compactOf(s forkengine.Snapshot) (compactSnapshot, bool) {
	if !compactable(s) {
		return compactSnapshot{}, false
	}
	c := compactSnapshot{C: 1, Version: s.Version, Session: sessionSnapshot.toCompact(&s.Session)}
	if s.Turns == nil && s.Messages == nil {
		c.SessionOnly = true
		return c, true
	}
	c.Turns, c.Messages = make([]compactTurn, len(s.Turns)), make([]compactMessage, len(s.Messages))
	for i, t := range s.Turns {
		c.Turns[i] = compactTurn{ID: t.ID, Sequence: t.Sequence, Phase: string(t.Phase), Outcome: string(t.Outcome),
			Origin: t.Origin, StartedAt: micros(t.StartedAt), SettledAt: microsPtr(t.SettledAt),
			UpdatedAt: micros(t.UpdatedAt), ProviderTurnID: t.ProviderTurnID, ProviderTurnBinding: t.ProviderTurnBinding}
	}
	for i, m := range s.Messages {
		c.Messages[i] = compactMessage{TurnID: m.TurnID, ID: m.ID, Position: m.Position, Role: string(m.Role),
			Content: m.Content, CreatedAt: micros(m.CreatedAt)}
	}
	return c, true
}

func (c compactSnapshot) domain() forkengine.Snapshot {
	s := forkengine.Snapshot{Version: c.Version}
	sessionSnapshot.fromCompact(&s.Session, c.Session)
	cs := &s.Session
	if c.SessionOnly {
		return s
	}
	s.Turns, s.Messages = make([]forkengine.Turn, len(c.Turns)), make([]forkengine.Message, len(c.Messages))
	for i, t := range c.Turns {
		s.Turns[i] = forkengine.Turn{WorkspaceID: cs.WorkspaceID, SessionID: cs.ID, ID: t.ID, Sequence: t.Sequence,
			Phase: forkengine.TurnPhase(t.Phase), Outcome: forkengine.TurnOutcome(t.Outcome), Origin: t.Origin,
			StartedAt: fromMicros(t.StartedAt), SettledAt: fromMicrosPtr(t.SettledAt), UpdatedAt: fromMicros(t.UpdatedAt),
			ProviderTurnID: t.ProviderTurnID, ProviderTurnBinding: t.ProviderTurnBinding}
	}
	for i, m := range c.Messages {
		s.Messages[i] = forkengine.Message{WorkspaceID: cs.WorkspaceID, SessionID: cs.ID, TurnID: m.TurnID, ID: m.ID,
			Position: m.Position, Role: forkengine.MessageRole(m.Role), Content: m.Content, CreatedAt: fromMicros(m.CreatedAt)}
	}
	return s
}

// exactMicros reports whether t survives the trip through Unix microseconds unchanged.
func exactMicros(t time.Time) bool { return fromMicros(micros(t)) == t }

func exactMicrosPtr(t *time.Time) bool { return t == nil || exactMicros(*t) }
