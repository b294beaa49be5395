package models

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Reason codes of BAD_USER_INPUT errors about cursors. A malformed cursor of any list is the same
// invalid_cursor the event log gives a cursor it does not hold.
const (
	ReasonInvalidCursor = forkengine.ReasonInvalidCursor
	ReasonCursorExpired = forkengine.ReasonCursorExpired
)

// Cursors are opaque to clients: base64url of "<kind>|<position>". A page cursor's position
// starts with its list's scope (ListScope): the kind and the scope keep a cursor of one list from
// being accepted by another; the rest is a keyset, so pages stay stable while rows are added.
const (
	cursorSession   = "session"
	cursorOperation = "operation"
	cursorTurn      = "turn"
	cursorEvent     = "event"
)

func encodeCursor(kind, position string) string {
	var raw [64]byte
	return encodeRaw(append(append(append(raw[:0], kind...), '|'), position...))
}

// encodeRaw is a cursor's base64 of raw, built in a buffer on the stack when it fits: a page of
// 100 sessions encodes 100 cursors, and each cost five allocations through string concatenation,
// time.Format and EncodeToString, now one.
func encodeRaw(raw []byte) string {
	var buf [128]byte
	return string(base64.RawURLEncoding.AppendEncode(buf[:0], raw))
}

// decodeCursor returns the position of a cursor of the given kind; nil or empty means the start.
func decodeCursor(kind string, cursor *string) (string, bool, error) {
	if cursor == nil || *cursor == "" {
		return "", false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(*cursor)
	position, ok := strings.CutPrefix(string(raw), kind+"|")
	if err != nil || !ok {
		return "", false, invalidCursor(*cursor)
	}
	return position, true, nil
}

func invalidCursor(cursor string) error {
	return forkengine.ReasonErrorf(forkengine.CodeInvalid, ReasonInvalidCursor,
		"cursor %q is not a cursor of this list", cursor)
}

// ListScope names the list a page cursor belongs to: 8 hex digits of a 32-bit FNV-1a hash of what
// selects the list's rows (the workspace; for turns, their session; the filter). Every page
// cursor carries its list's scope, so a cursor of another list (another workspace's, another
// session's turns, the same list under another filter) is refused with invalid_cursor instead of
// paging this list from that list's position. A cursor without a scope, as servers before scopes
// handed out, is still read, without that check.
type ListScope string

const scopeLength = 8

func scopeOf(parts ...string) ListScope {
	h := fnv.New32a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return ListScope(fmt.Sprintf("%08x", h.Sum32()))
}

// SessionListScope is the scope of sessions(workspaceId, filter).
func SessionListScope(workspaceID string, f forkengine.SessionFilter) ListScope {
	visible := ""
	if f.Visible != nil {
		visible = strconv.FormatBool(*f.Visible)
	}
	parts := []string{cursorSession, workspaceID, string(f.Kind), f.Provider, visible, strconv.FormatBool(f.IncludeDeleted), strconv.FormatBool(f.RootsOnly)}
	if len(f.Search) > 0 { // a search's words (sorted by ParseSearch); a list without one keeps its scope
		parts = append(parts, strings.Join(f.Search, " "))
	}
	return scopeOf(parts...)
}

// OperationListScope is the scope of forkOperations(workspaceId, filter); the order of the
// statuses asked for does not matter.
func OperationListScope(workspaceID string, f forkengine.OperationFilter) ListScope {
	statuses := make([]string, len(f.Statuses))
	for i, st := range f.Statuses {
		statuses[i] = string(st)
	}
	slices.Sort(statuses)
	return scopeOf(cursorOperation, workspaceID, f.SourceSessionID, f.TargetSessionID, f.ThroughTurnID,
		strings.Join(slices.Compact(statuses), ","))
}

// TurnListScope is the scope of one session's turns.
func TurnListScope(workspaceID, sessionID string) ListScope {
	return scopeOf(cursorTurn, workspaceID, sessionID)
}

// inScope returns the rest of a page cursor's position after its scope, or the position itself
// for a cursor without one; ok is false for a scope other than want.
func inScope(position string, want ListScope) (string, bool) {
	if len(position) <= scopeLength || position[scopeLength] != '|' || !isLowerHex(position[:scopeLength]) {
		return position, true // no scope: a cursor from before scopes
	}
	return position[scopeLength+1:], position[:scopeLength] == string(want)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func encodeKeyset(kind string, scope ListScope, t time.Time, id string) string {
	var raw [104]byte
	b := append(append(append(append(raw[:0], kind...), '|'), scope...), '|')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return encodeRaw(append(append(b, '|'), id...))
}

func decodeKeyset(kind string, scope ListScope, cursor *string) (forkengine.PageCursor, error) {
	position, ok, err := decodeCursor(kind, cursor)
	if err != nil || !ok {
		return forkengine.PageCursor{}, err
	}
	position, ok = inScope(position, scope)
	stamp, id, found := strings.Cut(position, "|")
	t, perr := time.Parse(time.RFC3339Nano, stamp)
	// The id goes into the read as it is: one no id rule admits (a NUL fails the read on
	// PostgreSQL) is a cursor no page handed out.
	if !ok || !found || perr != nil || forkengine.ValidateID("cursor", id) != nil {
		return forkengine.PageCursor{}, invalidCursor(*cursor)
	}
	return forkengine.PageCursor{Time: t, ID: id}, nil
}

// SessionCursor is the cursor of a session in the sessions list of scope.
func SessionCursor(scope ListScope, s forkengine.Session) string {
	return encodeKeyset(cursorSession, scope, s.CreatedAt, s.ID)
}

// DecodeSessionCursor reads an after or before argument of the sessions list of scope. Errors:
// BAD_USER_INPUT (invalid_cursor).
func DecodeSessionCursor(cursor *string, scope ListScope) (forkengine.PageCursor, error) {
	return decodeKeyset(cursorSession, scope, cursor)
}

// OperationCursor is the cursor of an operation in the forkOperations list of scope.
func OperationCursor(scope ListScope, op forkengine.ForkOperation) string {
	return encodeKeyset(cursorOperation, scope, op.CreatedAt, op.ID)
}

// DecodeOperationCursor reads an after or before argument of the forkOperations list of scope.
// Errors: BAD_USER_INPUT (invalid_cursor).
func DecodeOperationCursor(cursor *string, scope ListScope) (forkengine.PageCursor, error) {
	return decodeKeyset(cursorOperation, scope, cursor)
}

// TurnCursor is the cursor of a turn in its session's turns list (scope: TurnListScope).
func TurnCursor(scope ListScope, t forkengine.Turn) string {
	var raw [48]byte
	b := append(append(append(append(raw[:0], cursorTurn...), '|'), scope...), '|')
	return encodeRaw(strconv.AppendInt(b, t.Sequence, 10))
}

// DecodeTurnCursor returns the sequence a turns page of scope starts after or before (0: the
// list's end). Errors: BAD_USER_INPUT (invalid_cursor).
func DecodeTurnCursor(cursor *string, scope ListScope) (int64, error) {
	position, ok, err := decodeCursor(cursorTurn, cursor)
	if err != nil || !ok {
		return 0, err
	}
	position, ok = inScope(position, scope)
	n, perr := strconv.ParseInt(position, 10, 64)
	if !ok || perr != nil || n < 1 {
		return 0, invalidCursor(*cursor)
	}
	return n, nil
}

// EventCursor is the cursor of a workspace event.
func EventCursor(cursor int64) string {
	return encodeCursor(cursorEvent, strconv.FormatInt(cursor, 10))
}

// DecodeEventCursor returns the log position a workspaceEvents `after` names, and whether one was
// given. EventCursor(0) is the start of the log: everything after it is replayed, so a client that
// read it from workspaceEventCursor on an empty workspace misses nothing. Errors: BAD_USER_INPUT
// (invalid_cursor).
func DecodeEventCursor(after *string) (int64, bool, error) {
	position, ok, err := decodeCursor(cursorEvent, after)
	if err != nil || !ok {
		return 0, false, err
	}
	n, perr := strconv.ParseInt(position, 10, 64)
	if perr != nil || n < 0 {
		return 0, false, invalidCursor(*after)
	}
	return n, true, nil
}
