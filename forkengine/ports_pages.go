package forkengine

import (
	"context"
	"math"
)

// MessageCursor is a position in a session's transcript, which is ordered by the sequence of a
// message's turn and then by the message's Position (positions are handed out per workspace, so a
// message appended later to an earlier turn still sorts inside that turn). The zero value is the
// start of a forward read; a backward read from the end uses TranscriptEnd.
type MessageCursor struct {
	Sequence int64
	Position int64
}

// TranscriptMessage is a message of a transcript page with the sequence of its turn, which its
// MessageCursor needs.
type TranscriptMessage struct {
	Message
	Sequence int64
}

// Cursor is the message's position in its transcript.
func (m TranscriptMessage) Cursor() MessageCursor {
	return MessageCursor{Sequence: m.Sequence, Position: m.Position}
}

// TranscriptEnd is the cursor past the last message of every transcript: where a backward page
// without `before` starts.
var TranscriptEnd = MessageCursor{Sequence: math.MaxInt64, Position: math.MaxInt64}

// Before reports whether a message of turn sequence seq at position sorts strictly before c.
func (c MessageCursor) Before(seq, position int64) bool {
	return seq < c.Sequence || (seq == c.Sequence && position < c.Position)
}

// After reports whether a message of turn sequence seq at position sorts strictly after c.
func (c MessageCursor) After(seq, position int64) bool {
	return seq > c.Sequence || (seq == c.Sequence && position > c.Position)
}

// PageReader is the paged reads of the lists that have no bound of their own: a session's
// transcript, a turn's messages and a session's forks (the connections of docs/design/shared-
// history.md §7). Each takes a batch of owners and costs one statement for the whole batch, reading
// O(limit) rows per owner (and per history segment of a fork) at any depth; limit must be > 0.
// Inherited messages are read through the History's segments and presented as the child's, as the
// unpaged reads present them.
type PageReader interface {
	// SessionMessagesAfter returns, per session, up to limit messages after the cursor in transcript
	// order (see MessageCursor).
	SessionMessagesAfter(ctx context.Context, workspaceID string, sessionIDs []string, after MessageCursor, limit int) (map[string][]TranscriptMessage, error)
	// SessionMessagesBefore returns, per session, up to limit messages strictly before the cursor
	// (TranscriptEnd: from the last), nearest the cursor first.
	SessionMessagesBefore(ctx context.Context, workspaceID string, sessionIDs []string, before MessageCursor, limit int) (map[string][]TranscriptMessage, error)
	// CountSessionMessages counts each session's transcript, inherited messages included (absent:
	// none). One statement; it counts index entries, O(messages), so it runs only when asked.
	CountSessionMessages(ctx context.Context, workspaceID string, sessionIDs []string) (map[string]int, error)

	// TurnMessagesAfter returns, per turn (stored or presented id), up to limit of its messages with
	// Position > afterPosition, in Position order.
	TurnMessagesAfter(ctx context.Context, workspaceID string, turnIDs []string, afterPosition int64, limit int) (map[string][]Message, error)
	// TurnMessagesBefore returns, per turn, up to limit of its messages with Position <
	// beforePosition (<= 0: from the last), highest position first.
	TurnMessagesBefore(ctx context.Context, workspaceID string, turnIDs []string, beforePosition int64, limit int) (map[string][]Message, error)
	// CountTurnMessages counts each turn's messages (absent: none).
	CountTurnMessages(ctx context.Context, workspaceID string, turnIDs []string) (map[string]int, error)

	// LineagesBySourceIDsAfter returns, per source, up to limit lineages after the cursor (zero:
	// from the first) in (ForkedAt, TargetSessionID) order.
	LineagesBySourceIDsAfter(ctx context.Context, workspaceID string, sourceIDs []string, after PageCursor, limit int) (map[string][]Lineage, error)
	// LineagesBySourceIDsBefore returns, per source, up to limit lineages strictly before the
	// cursor (zero: from the newest), newest first.
	LineagesBySourceIDsBefore(ctx context.Context, workspaceID string, sourceIDs []string, before PageCursor, limit int) (map[string][]Lineage, error)
	// CountLineagesBySourceIDs counts each source's forks (absent: none).
	CountLineagesBySourceIDs(ctx context.Context, workspaceID string, sourceIDs []string) (map[string]int, error)
}
