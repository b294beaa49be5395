package forkengine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Two different references that the child's mapping would give one id fail closed. Derived ids
// are 64-bit hashes, so a real collision cannot be produced; a mapping that folds ids stands in.
func TestPrefixReferencesTargetCollisionFailsClosed(t *testing.T) {
	t.Parallel()
	msgs := []Message{
		{ID: "m1", TurnID: "t1", Parts: []MessagePart{{Kind: PartToolCall, CallID: "call-a", Name: "shell"}}},
		{ID: "m2", TurnID: "t1", Parts: []MessagePart{{Kind: PartToolCall, CallID: "call-b", Name: "shell"}}},
	}
	folded := func(kind, id string) string { return "one-" + kind }
	err := prefixReferencesProblem(msgs, folded)
	require.Equal(t, CodeForkConflict, ErrorCode(err))
	require.Equal(t, ReasonTypedReferenceCollision, ErrorReason(err))

	// The same reference twice (a call and its result, two mentions of one attachment) is no collision.
	msgs = []Message{
		{ID: "m1", TurnID: "t1", Parts: []MessagePart{{Kind: PartToolCall, CallID: "call-a", Name: "shell"},
			{Kind: PartAttachment, AttachmentID: "att"}}},
		{ID: "m2", TurnID: "t1", Parts: []MessagePart{{Kind: PartToolResult, CallID: "call-a"}, {Kind: PartAttachment, AttachmentID: "att"}}},
	}
	require.NoError(t, prefixReferencesProblem(msgs, folded))
	// Calls of different turns may share an id: each turn's results name their own.
	msgs = append(msgs, Message{ID: "m3", TurnID: "t2", Parts: []MessagePart{{Kind: PartToolCall, CallID: "call-a", Name: "shell"}}})
	require.NoError(t, prefixReferencesProblem(msgs, func(kind, id string) string { return kind + id }))
}
