package forkengine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func TestRemapParts(t *testing.T) {
	t.Parallel()
	mapRef := func(kind, id string) string { return kind + ":" + id }
	t.Run("OK", func(t *testing.T) {
		parts := []forkengine.MessagePart{
			{Kind: forkengine.PartText, Text: "call-1 att-1"},
			{Kind: forkengine.PartToolCall, CallID: "call-1", Name: "shell", Input: json.RawMessage(`{"id":"call-1"}`)},
			{Kind: forkengine.PartToolResult, CallID: "call-1", Output: "att-1"},
			{Kind: forkengine.PartAttachment, AttachmentID: "att-1", Name: "call-1.txt"},
		}
		got, err := forkengine.RemapParts(parts, mapRef)
		require.NoError(t, err)
		require.Equal(t, "call-1 att-1", got[0].Text)
		require.Equal(t, "call:call-1", got[1].CallID)
		require.JSONEq(t, `{"id":"call-1"}`, string(got[1].Input))
		require.Equal(t, "call:call-1", got[2].CallID)
		require.Equal(t, "att-1", got[2].Output)
		require.Equal(t, "attachment:att-1", got[3].AttachmentID)
		require.Equal(t, "call-1.txt", got[3].Name)
		require.Equal(t, "call-1", parts[1].CallID, "the source's parts are not changed")
	})
	// Reference §6.2: an unknown typed reference fails the remap closed.
	t.Run("ErrTypedReferenceUnknown", func(t *testing.T) {
		_, err := forkengine.RemapParts([]forkengine.MessagePart{{Kind: "future_kind", CallID: "x"}}, mapRef)
		require.Equal(t, forkengine.CodeForkConflict, forkengine.ErrorCode(err))
		require.Equal(t, forkengine.ReasonTypedReferenceUnknown, forkengine.ErrorReason(err))
	})
}

func TestRenderParts(t *testing.T) {
	t.Parallel()
	got := forkengine.RenderParts([]forkengine.MessagePart{
		{Kind: forkengine.PartText, Text: "hi"},
		{Kind: forkengine.PartReasoning, Text: "hidden"},
		{Kind: forkengine.PartToolCall, CallID: "c", Name: "ls", Input: json.RawMessage(`{"a":1}`)},
		{Kind: forkengine.PartToolResult, CallID: "c", Output: "ok"},
		{Kind: forkengine.PartToolResult, CallID: "c", Output: "bad", IsError: true},
		{Kind: forkengine.PartAttachment, AttachmentID: "a1"},
	})
	require.Equal(t, "hi\n\n[tool call ls {\"a\":1}]\n\n[tool result ok]\n\n[tool error bad]\n\n[attachment a1]", got)
}
