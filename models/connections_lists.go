package models

import (
	"strconv"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The connections of the lists that had none: a session's transcript and a turn's messages
// (MessageConnection) and a session's forks (LineageConnection), docs/design/shared-history.md §7.

// Cursor kinds of the lists below (see encodeCursor).
const (
	cursorTranscript  = "transcript"
	cursorTurnMessage = "turnmessage"
	cursorFork        = "fork"
)

// MessageConnection is a page of a session's transcript (TurnID empty) or of one turn's messages;
// totalCount is resolved through a loader from the owner kept here.
type MessageConnection struct {
	Edges    []*MessageEdge
	PageInfo *PageInfo

	WorkspaceID string
	SessionID   string // the transcript's session, or the turn's
	TurnID      string // set for a turn's messages
}

// TranscriptListScope is the scope of one session's messagesConnection.
func TranscriptListScope(workspaceID, sessionID string) ListScope {
	return scopeOf(cursorTranscript, workspaceID, sessionID)
}

// TurnMessageListScope is the scope of one turn's messagesConnection.
func TurnMessageListScope(workspaceID, turnID string) ListScope {
	return scopeOf(cursorTurnMessage, workspaceID, turnID)
}

// ForkListScope is the scope of one session's forksConnection.
func ForkListScope(workspaceID, sessionID string) ListScope {
	return scopeOf(cursorFork, workspaceID, sessionID)
}

func scoped(kind string, scope ListScope, position string) string {
	return encodeRaw([]byte(kind + "|" + string(scope) + "|" + position))
}

// TranscriptCursor is the cursor of a message in its session's transcript: its turn's sequence
// and its position.
func TranscriptCursor(scope ListScope, c forkengine.MessageCursor) string {
	return scoped(cursorTranscript, scope, strconv.FormatInt(c.Sequence, 10)+"."+strconv.FormatInt(c.Position, 10))
}

// DecodeTranscriptCursor returns the transcript position a page of scope starts after or before
// (the zero cursor: the list's end). Errors: BAD_USER_INPUT (invalid_cursor).
func DecodeTranscriptCursor(cursor *string, scope ListScope) (forkengine.MessageCursor, error) {
	position, ok, err := decodeCursor(cursorTranscript, cursor)
	if err != nil || !ok {
		return forkengine.MessageCursor{}, err
	}
	position, ok = inScope(position, scope)
	s, p, found := strings.Cut(position, ".")
	seq, err1 := strconv.ParseInt(s, 10, 64)
	pos, err2 := strconv.ParseInt(p, 10, 64)
	if !ok || !found || err1 != nil || err2 != nil || seq < 1 || pos < 1 {
		return forkengine.MessageCursor{}, invalidCursor(*cursor)
	}
	return forkengine.MessageCursor{Sequence: seq, Position: pos}, nil
}

// TurnMessageCursor is the cursor of a message in its turn's messages: its position.
func TurnMessageCursor(scope ListScope, position int64) string {
	return scoped(cursorTurnMessage, scope, strconv.FormatInt(position, 10))
}

// DecodeTurnMessageCursor returns the position a page of a turn's messages starts after or
// before (0: the list's end). Errors: BAD_USER_INPUT (invalid_cursor).
func DecodeTurnMessageCursor(cursor *string, scope ListScope) (int64, error) {
	position, ok, err := decodeCursor(cursorTurnMessage, cursor)
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

// ForkCursor is the cursor of a lineage in its source's forks.
func ForkCursor(scope ListScope, l forkengine.Lineage) string {
	return encodeKeyset(cursorFork, scope, l.ForkedAt, l.TargetSessionID)
}

// DecodeForkCursor reads an after or before argument of a session's forksConnection. Errors:
// BAD_USER_INPUT (invalid_cursor).
func DecodeForkCursor(cursor *string, scope ListScope) (forkengine.PageCursor, error) {
	return decodeKeyset(cursorFork, scope, cursor)
}

// TranscriptConnectionFrom builds a page of a session's transcript from up to page.Size+1
// messages, nearest the cursor first.
func TranscriptConnectionFrom(workspaceID, sessionID string, rows []forkengine.TranscriptMessage, page Page) *MessageConnection {
	scope := TranscriptListScope(workspaceID, sessionID)
	cursor := func(m forkengine.TranscriptMessage) string { return TranscriptCursor(scope, m.Cursor()) }
	rows, info := pageOf(rows, page, cursor)
	msgs := make([]forkengine.Message, len(rows))
	for i, m := range rows {
		msgs[i] = m.Message
	}
	views := MessagesFrom(msgs)
	edges, edgeValues := make([]*MessageEdge, len(rows)), make([]MessageEdge, len(rows))
	for i, m := range rows {
		edgeValues[i] = MessageEdge{Cursor: cursor(m), Node: views[i]}
		edges[i] = &edgeValues[i]
	}
	return &MessageConnection{Edges: edges, PageInfo: info, WorkspaceID: workspaceID, SessionID: sessionID}
}

// TurnMessageConnectionFrom builds a page of one turn's messages from up to page.Size+1
// messages, nearest the cursor first.
func TurnMessageConnectionFrom(workspaceID, sessionID, turnID string, rows []forkengine.Message, page Page) *MessageConnection {
	scope := TurnMessageListScope(workspaceID, turnID)
	cursor := func(m forkengine.Message) string { return TurnMessageCursor(scope, m.Position) }
	rows, info := pageOf(rows, page, cursor)
	views := MessagesFrom(rows)
	edges, edgeValues := make([]*MessageEdge, len(rows)), make([]MessageEdge, len(rows))
	for i, m := range rows {
		edgeValues[i] = MessageEdge{Cursor: cursor(m), Node: views[i]}
		edges[i] = &edgeValues[i]
	}
	return &MessageConnection{Edges: edges, PageInfo: info, WorkspaceID: workspaceID, SessionID: sessionID, TurnID: turnID}
}

// LineageConnection is a page of a session's forks; totalCount is resolved through a loader.
type LineageConnection struct {
	Edges    []*LineageEdge
	PageInfo *PageInfo

	WorkspaceID string
	SessionID   string
}

// LineageConnectionFrom builds a page of a session's forks from up to page.Size+1 lineages,
// nearest the cursor first; rel resolves the relations of its lineages.
func LineageConnectionFrom(workspaceID, sessionID string, rows []forkengine.Lineage, page Page, rel Relations) *LineageConnection {
	scope := ForkListScope(workspaceID, sessionID)
	cursor := func(l forkengine.Lineage) string { return ForkCursor(scope, l) }
	rows, info := pageOf(rows, page, cursor)
	edges := make([]*LineageEdge, len(rows))
	for i, l := range rows {
		edges[i] = &LineageEdge{Cursor: cursor(l), Node: LineageFrom(l, rel)}
	}
	return &LineageConnection{Edges: edges, PageInfo: info, WorkspaceID: workspaceID, SessionID: sessionID}
}
