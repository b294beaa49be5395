package forkengine

import (
	"slices"
	"strconv"
	"strings"
)

// Shared history (docs/design/shared-history.md). A committed fork stores no copy of the history
// it inherits: its History lists, in order, the segments of other sessions' rows it reads, each a
// range of an owner's turn sequences and the message watermark that froze them. Reads merge the
// segments with the child's own rows (which win at a shared sequence: they are the turns the
// child holds a row of its own for, such as a prefix turn that had not settled when the fork
// was frozen), and present every inherited row under the child's session and an id of the
// child's own (PresentedTurnID). Sharing is correct because what a segment reads never changes:
// messages are insert-only, a settled turn's fields never change, and a message appended later
// takes a position above every watermark frozen before it.

// History is a committed fork's inherited prefix.
type History struct {
	WorkspaceID string
	SessionID   string
	// Key is the child's short history key (HistoryKeyLength characters): its presented ids
	// carry it, so node(id:) finds the child without a row per inherited entity.
	Key string
	// Boundary is the sequence of the last inherited turn.
	Boundary int64
	// PrefixTurns counts the turns of the prefix, InheritedTurns those of them the child reads
	// through its segments (the rest it holds rows of its own for).
	PrefixTurns    int
	InheritedTurns int
	Segments       []HistorySegment
	// AuditBound is the history clock's value when the fork was frozen (Snapshot.AuditBound):
	// the child presents its segments' owners' audit messages up to it (InheritsAudit).
	// LegacyAuditBound for a child committed before then, which holds copies of them.
	AuditBound int64
	// InheritedMessages is the number of messages the segments present, as the snapshot froze
	// it (Snapshot.PrefixCount), when MessagesCounted: a store keeps it instead of counting them.
	InheritedMessages int64
	MessagesCounted   bool
}

// HistorySegment is a range of one owner's turns a child reads: the owner's turns with From <
// Sequence <= To, and of their messages those with Position <= Watermark. Segments later in a
// History take precedence over earlier ones at a shared sequence.
type HistorySegment struct {
	// OwnerWorkspaceID is where the owner's rows are: the child's workspace, or after the owner
	// was purged, the tombstone workspace its rows were moved to (never one a client can name).
	OwnerWorkspaceID string
	OwnerSessionID   string
	From, To         int64
	Watermark        int64
	// Via are the history keys of the forks between the owner and the History's session, the
	// owner's own fork first: each presented the segment's rows to the next under its key, so a
	// typed reference read through the segment is presented through every one of them before the
	// session's own key (PresentMessage). Empty for the source's own rows, and for segments
	// committed before the remap composed (their readers present them under their key alone).
	Via []string `json:",omitempty"`
}

// HistoryKeyLength is the length of a History.Key.
const HistoryKeyLength = 11

// A presented id is "h" + the child's key + "-t" + the turn's sequence in base 36 (a turn), or
// "-m" + the sequence and "." + the message's position in base 36 (a message): at most 40
// characters, far under MaxIDLength, so a fork of a fork can name an inherited turn.
const (
	presentedPrefix  = "h"
	presentedTurn    = "-t"
	presentedMessage = "-m"
)

// PresentedTurnID is the id under which a child with history key key presents its inherited turn
// of sequence seq.
func PresentedTurnID(key string, seq int64) string {
	// Built in one allocation: a page presents one id per row it reads.
	var buf [64]byte
	b := append(append(append(buf[:0], presentedPrefix...), key...), presentedTurn...)
	return string(strconv.AppendInt(b, seq, 36))
}

// PresentedMessageID is the id under which a child presents an inherited message: its turn's
// sequence and its position.
func PresentedMessageID(key string, seq, position int64) string {
	var buf [64]byte
	b := append(append(append(buf[:0], presentedPrefix...), key...), presentedMessage...)
	b = append(strconv.AppendInt(b, seq, 36), '.')
	return string(strconv.AppendInt(b, position, 36))
}

// ParsePresentedTurnID decodes a PresentedTurnID; ok is false for any other id.
func ParsePresentedTurnID(id string) (key string, seq int64, ok bool) {
	key, rest, ok := cutPresented(id, presentedTurn)
	if !ok {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(rest, 36, 64)
	if err != nil || seq <= 0 || !canonicalBase36(rest) {
		return "", 0, false
	}
	return key, seq, true
}

// canonicalBase36 reports whether s is spelled as strconv.FormatInt spells a positive number in
// base 36 (lower case, no sign, no leading zero), checked without formatting it again: a read of
// a page of inherited turns' messages parses every presented id it is given.
func canonicalBase36(s string) bool {
	if s == "" || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// ParsePresentedMessageID decodes a PresentedMessageID; ok is false for any other id.
func ParsePresentedMessageID(id string) (key string, seq, position int64, ok bool) {
	key, rest, ok := cutPresented(id, presentedMessage)
	if !ok {
		return "", 0, 0, false
	}
	s, p, found := strings.Cut(rest, ".")
	seq, err1 := strconv.ParseInt(s, 36, 64)
	position, err2 := strconv.ParseInt(p, 36, 64)
	if !found || err1 != nil || err2 != nil || seq <= 0 || position <= 0 ||
		strconv.FormatInt(seq, 36) != s || strconv.FormatInt(position, 36) != p {
		return "", 0, 0, false
	}
	return key, seq, position, true
}

func cutPresented(id, kind string) (string, string, bool) {
	n := len(presentedPrefix) + HistoryKeyLength
	if len(id) <= n+len(kind) || !strings.HasPrefix(id, presentedPrefix) || id[n:n+len(kind)] != kind {
		return "", "", false
	}
	return id[len(presentedPrefix):n], id[n+len(kind):], true
}

// PresentTurn is t, a row of a segment's owner, as the child with history h shows it
// (PresentTurnIn).
func PresentTurn(h History, t Turn) Turn {
	PresentTurnIn(h, &t)
	return t
}

// PresentTurnIn presents t in place: the one place an inherited turn becomes the child's. A store
// presenting a page's rows where it read them copies no turn.
func PresentTurnIn(h History, t *Turn) {
	t.WorkspaceID, t.SessionID, t.ID = h.WorkspaceID, h.SessionID, PresentedTurnID(h.Key, t.Sequence)
}

// PresentMessage is m, a message of the owner's turn of sequence seq read through a segment whose
// Via is via, as the child shows it: the one place an inherited message becomes the child's, so
// the typed references inside its parts are rewritten here. A reference is presented under each
// key of via in turn and then under the child's (presentedRef), exactly as each fork on the way
// presented it to the next: the child's ids are a function of what its source showed, so a
// result its source appended answering a call it inherited (stored under the source's presented
// id) still names the call here, the same pairing a copy of a copy gives. The stores refuse to
// read a part of a kind they do not know, and prepare refuses a prefix RemapParts could not map
// (checkPrefixReferences); if it still failed, the message is shown as its plain text, never
// with the source's references.
func PresentMessage(h History, via []string, seq int64, m Message) Message {
	return PresentMessageOfTurn(h, via, PresentedTurnID(h.Key, seq), seq, m)
}

// PresentMessageOfTurn is PresentMessage for a caller that holds the presented turn id already
// (turnID, which must be PresentedTurnID(h.Key, seq)): a page presents each turn's messages one
// after the other, and building the same turn id again for each was an allocation per message.
func PresentMessageOfTurn(h History, via []string, turnID string, seq int64, m Message) Message {
	m.WorkspaceID, m.SessionID = h.WorkspaceID, h.SessionID
	m.TurnID, m.ID = turnID, PresentedMessageID(h.Key, seq, m.Position)
	if m.Parts == nil {
		return m // a plain message: nothing to remap (and no closure to allocate per row)
	}
	parts, err := RemapParts(m.Parts, func(kind, id string) string { return presentedRefVia(h.Key, via, kind, id) })
	if err != nil {
		parts = nil
	}
	m.Parts = parts
	return m
}

// presentedRefVia presents reference id of kind through the keys of via and then key.
func presentedRefVia(key string, via []string, kind, id string) string {
	for _, k := range via {
		id = presentedRef(k, kind, id)
	}
	return presentedRef(key, kind, id)
}

// Overrides reports whether the child holds rows of its own for some inherited sequences.
func (h History) Overrides() bool { return h.InheritedTurns < h.PrefixTurns }

// Covering returns the index of the segment that presents sequence seq (the last one whose
// range holds it), or -1.
func (h History) Covering(seq int64) int {
	for i := len(h.Segments) - 1; i >= 0; i-- {
		if s := h.Segments[i]; s.From < seq && seq <= s.To {
			return i
		}
	}
	return -1
}

// childSegments are the segments of a fork of source (whose own history is src, zero for a
// root) through boundary sequence b frozen at watermark w: the source's segments cut at b, then
// the source's own rows up to b. A source that is itself a fork holds rows of its own below its
// boundary only when it overrides inherited turns (overrides says whether it does); without any,
// its segment starts above its boundary, so a page of the inherited prefix reads one segment per
// owner it really spans, not one per ancestor.
func childSegments(src History, overrides bool, sourceWS, sourceID string, b, w int64) []HistorySegment {
	var out []HistorySegment
	for _, s := range src.Segments {
		if s.From >= b {
			continue
		}
		s.To = min(s.To, b)
		// The source presented these rows under its key: the child presents what the source showed.
		s.Via = append(slices.Clip(s.Via), src.Key)
		out = append(out, s)
	}
	own := HistorySegment{OwnerWorkspaceID: sourceWS, OwnerSessionID: sourceID, From: 0, To: b, Watermark: w}
	if len(src.Segments) > 0 && !overrides {
		own.From = min(src.Boundary, b)
	}
	if own.From < own.To {
		out = append(out, own)
	}
	return out
}
