package models

import (
	"encoding/base64"
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

// Cursors are opaque to clients: base64url of "<kind>|<position>". The kind keeps a cursor of one
// list from being accepted by another; the position is a keyset, so pages stay stable while rows
// are added.
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

func encodeKeyset(kind string, t time.Time, id string) string {
	var raw [96]byte
	b := t.UTC().AppendFormat(append(append(raw[:0], kind...), '|'), time.RFC3339Nano)
	return encodeRaw(append(append(b, '|'), id...))
}

func decodeKeyset(kind string, cursor *string) (forkengine.PageCursor, error) {
	position, ok, err := decodeCursor(kind, cursor)
	if err != nil || !ok {
		return forkengine.PageCursor{}, err
	}
	stamp, id, found := strings.Cut(position, "|")
	t, perr := time.Parse(time.RFC3339Nano, stamp)
	if !found || perr != nil || id == "" {
		return forkengine.PageCursor{}, invalidCursor(*cursor)
	}
	return forkengine.PageCursor{Time: t, ID: id}, nil
}

// SessionCursor is the cursor of a session in a sessions connection.
func SessionCursor(s forkengine.Session) string {
	return encodeKeyset(cursorSession, s.CreatedAt, s.ID)
}

// DecodeSessionCursor reads an `after` argument of sessions. Errors: BAD_USER_INPUT (invalid_cursor).
func DecodeSessionCursor(after *string) (forkengine.PageCursor, error) {
	return decodeKeyset(cursorSession, after)
}

// OperationCursor is the cursor of an operation in a forkOperations connection.
func OperationCursor(op forkengine.ForkOperation) string {
	return encodeKeyset(cursorOperation, op.CreatedAt, op.ID)
}

// DecodeOperationCursor reads an `after` argument of forkOperations. Errors: BAD_USER_INPUT
// (invalid_cursor).
func DecodeOperationCursor(after *string) (forkengine.PageCursor, error) {
	return decodeKeyset(cursorOperation, after)
}

// TurnCursor is the cursor of a turn in a session's turns connection.
func TurnCursor(t forkengine.Turn) string {
	return encodeCursor(cursorTurn, strconv.FormatInt(t.Sequence, 10))
}

// DecodeTurnCursor returns the sequence after which a turns page starts (0: the first turn).
// Errors: BAD_USER_INPUT (invalid_cursor).
func DecodeTurnCursor(after *string) (int64, error) {
	return decodeNumber(cursorTurn, after)
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

func decodeNumber(kind string, cursor *string) (int64, error) {
	position, ok, err := decodeCursor(kind, cursor)
	if err != nil || !ok {
		return 0, err
	}
	n, perr := strconv.ParseInt(position, 10, 64)
	if perr != nil || n < 1 {
		return 0, invalidCursor(*cursor)
	}
	return n, nil
}
