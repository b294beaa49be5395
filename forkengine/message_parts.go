package forkengine

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Typed message content (reference §1.2, §6.2). A message either is plain text (Parts nil: its
// Content is its one text part, as every message stored before parts existed) or holds typed
// parts, from which its Content is rendered once, here, so clients that read only content, and
// search, which indexes content, keep working.

// PartKind is the kind of one typed part of a message.
type PartKind string

// Part kinds.
const (
	PartText       PartKind = "text"
	PartToolCall   PartKind = "tool_call"
	PartToolResult PartKind = "tool_result"
	PartAttachment PartKind = "attachment"
	PartReasoning  PartKind = "reasoning"
)

// Valid reports whether k is a known part kind.
func (k PartKind) Valid() bool {
	switch k {
	case PartText, PartToolCall, PartToolResult, PartAttachment, PartReasoning:
		return true
	}
	return false
}

// MessagePart is one typed part of a message. Which fields a part uses depends on its kind:
// text and reasoning: Text; tool_call: CallID, Name (the tool), Input (any JSON value);
// tool_result: CallID (the call it answers), Output, IsError; attachment: AttachmentID, Name (a
// file name), MediaType. CallID and AttachmentID are typed references: a fork rewrites them the
// way it derives the child's ids (RemapParts); Text, Output, Name and Input are never rewritten.
type MessagePart struct {
	Kind         PartKind        `json:"kind"`
	Text         string          `json:"text,omitempty"`
	CallID       string          `json:"callId,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Output       string          `json:"output,omitempty"`
	IsError      bool            `json:"isError,omitempty"`
	AttachmentID string          `json:"attachmentId,omitempty"`
	MediaType    string          `json:"mediaType,omitempty"`
}

// MaxPartsPerMessage bounds the typed parts of one message; their encoded size is bounded by
// MaxMessageBytes like plain content.
const MaxPartsPerMessage = 200

// Reasons of a refused typed message.
const (
	// ReasonInvalidMessagePart: a part of an unknown kind, without a field its kind needs, or
	// with a field its kind does not use.
	ReasonInvalidMessagePart = "invalid_message_part"
	// ReasonTooManyParts: more than MaxPartsPerMessage parts.
	ReasonTooManyParts = "too_many_parts"
	// ReasonMessageTooLarge: parts whose encoding is larger than MaxMessageBytes.
	ReasonMessageTooLarge = "message_too_large"
	// ReasonContentWithParts: a message given both content and parts (content is rendered from
	// the parts).
	ReasonContentWithParts = "content_with_parts"
	// ReasonToolCallUnknown: a tool result whose call id names no tool call of its turn, a
	// reference a fork could not map.
	ReasonToolCallUnknown = "tool_call_unknown"
)

// ContentParts are m's parts: its typed parts, or for a plain message one text part holding its
// content.
func (m Message) ContentParts() []MessagePart {
	if m.Parts != nil {
		return m.Parts
	}
	return []MessagePart{{Kind: PartText, Text: m.Content}}
}

// RenderParts is the plain-text rendering of typed parts, the Content of a typed message: text
// parts as they are, a tool call as "[tool call <name> <input>]", a tool result as "[tool result
// <output>]" (or "[tool error <output>]"), an attachment as "[attachment <name or id>]", joined by
// blank lines. Reasoning is left out: it is the model's working, not its answer, and a client
// that shows content would show it as the answer.
func RenderParts(parts []MessagePart) string {
	var b strings.Builder
	for _, p := range parts {
		var s string
		switch p.Kind {
		case PartText:
			s = p.Text
		case PartToolCall:
			s = "[tool call " + p.Name
			if len(p.Input) > 0 {
				s += " " + string(p.Input)
			}
			s += "]"
		case PartToolResult:
			label := "[tool result"
			if p.IsError {
				label = "[tool error"
			}
			s = label + " " + p.Output + "]"
		case PartAttachment:
			s = "[attachment " + cmpOr(p.Name, p.AttachmentID) + "]"
		default:
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s)
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// cleanParts checks the typed parts of message i and canonicalises tool call inputs (compact
// JSON, so a retried append with other whitespace is the same message). Errors: BAD_USER_INPUT
// reasons invalid_message_part, too_many_parts, message_too_large, invalid_text, invalid_id.
func cleanParts(i int, parts []MessagePart) ([]MessagePart, error) {
	if len(parts) > MaxPartsPerMessage {
		return nil, ReasonErrorf(CodeInvalid, ReasonTooManyParts, "messages[%d] has %d parts; at most %d", i, len(parts), MaxPartsPerMessage)
	}
	out := make([]MessagePart, len(parts))
	for j, p := range parts {
		field := fmt.Sprintf("messages[%d].parts[%d]", i, j)
		if err := checkPartShape(field, p); err != nil {
			return nil, err
		}
		for _, f := range [][2]string{{"text", p.Text}, {"name", p.Name}, {"output", p.Output}, {"mediaType", p.MediaType}} {
			if err := checkStorable(field+"."+f[0], f[1]); err != nil {
				return nil, err
			}
		}
		for _, f := range [][2]string{{"callId", p.CallID}, {"attachmentId", p.AttachmentID}} {
			if f[1] == "" {
				continue
			}
			if _, err := cleanID(field+"."+f[0], f[1]); err != nil {
				return nil, err
			}
		}
		if len(p.Input) > 0 {
			var buf bytes.Buffer
			if !utf8.Valid(p.Input) || json.Compact(&buf, p.Input) != nil {
				return nil, ReasonErrorf(CodeInvalid, ReasonInvalidMessagePart, "%s.input must be JSON", field)
			}
			p.Input = buf.Bytes()
		}
		out[j] = p
	}
	if n := encodedPartsSize(out); n > MaxMessageBytes {
		return nil, ReasonErrorf(CodeInvalid, ReasonMessageTooLarge, "messages[%d].parts are %d bytes; at most %d", i, n, MaxMessageBytes)
	}
	return out, nil
}

// checkPartShape refuses a part of an unknown kind, one without the fields its kind needs, and one
// with a field its kind does not use (which a client would expect to be kept).
func checkPartShape(field string, p MessagePart) error {
	bad := func(format string, args ...any) error {
		return ReasonErrorf(CodeInvalid, ReasonInvalidMessagePart, field+": "+format, args...)
	}
	if !p.Kind.Valid() {
		return bad("kind %q is not a part kind", p.Kind)
	}
	uses := map[string]bool{}
	for _, f := range partFields[p.Kind] {
		uses[f] = true
	}
	given := map[string]bool{"text": p.Text != "", "callId": p.CallID != "", "name": p.Name != "",
		"input": len(p.Input) > 0, "output": p.Output != "", "isError": p.IsError,
		"attachmentId": p.AttachmentID != "", "mediaType": p.MediaType != ""}
	for _, f := range []string{"text", "callId", "name", "input", "output", "isError", "attachmentId", "mediaType"} {
		if given[f] && !uses[f] {
			return bad("a %s part has no %s", p.Kind, f)
		}
	}
	for _, f := range partRequired[p.Kind] {
		if !given[f] {
			return bad("a %s part needs %s", p.Kind, f)
		}
	}
	return nil
}

var partFields = map[PartKind][]string{
	PartText:       {"text"},
	PartReasoning:  {"text"},
	PartToolCall:   {"callId", "name", "input"},
	PartToolResult: {"callId", "output", "isError"},
	PartAttachment: {"attachmentId", "name", "mediaType"},
}

var partRequired = map[PartKind][]string{
	PartToolCall:   {"callId", "name"},
	PartToolResult: {"callId"},
	PartAttachment: {"attachmentId"},
}

func encodedPartsSize(parts []MessagePart) int {
	b, _ := json.Marshal(parts)
	return len(b)
}

// sameParts compares two messages' typed parts (nil: plain).
func sameParts(a, b []MessagePart) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Text != y.Text || x.CallID != y.CallID || x.Name != y.Name ||
			!bytes.Equal(x.Input, y.Input) || x.Output != y.Output || x.IsError != y.IsError ||
			x.AttachmentID != y.AttachmentID || x.MediaType != y.MediaType {
			return false
		}
	}
	return true
}

// toolCallsOf are the call ids of the tool calls among msgs.
func toolCallsOf(msgs []Message, into map[string]bool) {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Kind == PartToolCall {
				into[p.CallID] = true
			}
		}
	}
}

// Typed reference kinds: what RemapParts hands its mapping, and the kind a fork derives the
// child's id of a reference under ("attachment" as the reference names it; "call" for a tool
// call id, whose initial differs from a turn's).
const (
	refAttachment = "attachment"
	refCall       = "call"
)

// RemapParts is parts with every typed reference (a tool call's or result's call id, an
// attachment id) replaced by mapRef(kind, id), and nothing else changed: text, tool input and
// output, names and media types are kept as they are. A part of a kind this engine does not
// know could hold a reference it cannot map, so it fails the remap instead of passing source
// ids to the child. Errors: FORK_CONFLICT reason typed_reference_unknown.
func RemapParts(parts []MessagePart, mapRef func(kind, id string) string) ([]MessagePart, error) {
	if parts == nil {
		return nil, nil
	}
	out := make([]MessagePart, len(parts))
	for i, p := range parts {
		switch p.Kind {
		case PartToolCall, PartToolResult:
			p.CallID = mapRef(refCall, p.CallID)
		case PartAttachment:
			p.AttachmentID = mapRef(refAttachment, p.AttachmentID)
		case PartText, PartReasoning:
		default:
			return nil, ReasonErrorf(CodeForkConflict, ReasonTypedReferenceUnknown,
				"a message part of kind %q holds references this server cannot map", p.Kind)
		}
		out[i] = p
	}
	return out, nil
}

// ReasonTypedReferenceUnknown marks a fork refused or failed because an inherited message holds
// a typed part the remap does not know.
const ReasonTypedReferenceUnknown = "typed_reference_unknown"

// presentedRef is the id under which a child with history key key presents an inherited typed
// reference: "h" + key + "-" + the kind's initial + 64 bits of a hash of (key, kind, id). Like a
// copy's derived ids it is deterministic per child and isolated between children, so the call
// and the result of one tool call still pair up, and two forks never share an attachment id.
func presentedRef(key, kind, id string) string {
	sum := digest(identityNamespace, "presented", key, kind, id)
	return presentedPrefix + key + "-" + kind[:1] + base64.RawURLEncoding.EncodeToString(sum[:8])
}
