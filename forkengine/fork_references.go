package forkengine

import (
	"context"
	"fmt"
)

// A fork fails closed on a typed reference its remap cannot map (reference §6.2), and it does so
// at prepare, where the snapshot is frozen and the reference builds its identity map: before the
// provider is asked for a child, so no provider session is created for a fork that could never
// commit (and never has to be reconciled or cleaned up), and nothing is written but the refusal.
// Appends refuse such rows already (cleanParts, checkToolResults); what reaches this check is a
// row that came another way: written by an older or a newer server, or straight into the store.
//
// The check reads the prefix as the source presents it: a child's ids are a function of the ids
// its source shows (PresentMessage composes along the chain), so a prefix whose references pair
// up in the source's view pairs up in the child's. It reads only the messages that hold typed
// parts (Prefix.TypedMessages: a PrefixReader's, or TypedMessagesReader's), never a plain
// message's content.

// Reasons a fork is refused on a typed reference of its prefix (FORK_CONFLICT), beside
// ReasonTypedReferenceUnknown (a part of a kind this server does not know, or a reference in a
// field the remap does not rewrite).
const (
	// ReasonTypedReferenceEmpty: a tool call, tool result or attachment part without its id.
	ReasonTypedReferenceEmpty = "typed_reference_empty"
	// ReasonTypedReferenceDuplicate: two tool calls of one turn with one call id (a result of the
	// turn could answer either). Calls of different turns may share one: each turn's results
	// name its own, and the child keeps them apart the same way.
	ReasonTypedReferenceDuplicate = "typed_reference_duplicate"
	// ReasonTypedReferenceOutsidePrefix: a tool result whose call is not in the prefix (a later
	// turn's, or none at all).
	ReasonTypedReferenceOutsidePrefix = "typed_reference_outside_prefix"
	// ReasonTypedReferenceCollision: two references of the prefix that would get one id in the
	// child.
	ReasonTypedReferenceCollision = "typed_reference_collision"
)

// TypedMessagesReader is an optional Reader: a store that can read only the messages holding
// typed parts spares prepare a plain message's content. Without it, prepare reads the turns'
// messages (MessagesByTurnIDs) and skips the plain ones.
type TypedMessagesReader interface {
	// TypedMessagesByTurnIDs is MessagesByTurnIDs restricted to the messages that hold typed
	// parts, presented as MessagesByTurnIDs presents them.
	TypedMessagesByTurnIDs(ctx context.Context, workspaceID string, turnIDs []string) (map[string][]Message, error)
}

// prefixReferencesProblem is the first reason msgs (the prefix's typed messages, as the source
// shows them) cannot be remapped by mapRef, or nil.
func prefixReferencesProblem(msgs []Message, mapRef func(kind, id string) string) error {
	refuse := func(reason string, m Message, format string, args ...any) error {
		return ReasonErrorf(CodeForkConflict, reason, "message %q of the prefix: "+format, append([]any{m.ID}, args...)...)
	}
	calls, ofTurn := map[string]bool{}, map[[2]string]bool{}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if err := checkReferenceShape(p); err != "" {
				return refuse(ReasonTypedReferenceUnknown, m, "%s", err)
			}
			switch {
			case (p.Kind == PartToolCall || p.Kind == PartToolResult) && p.CallID == "":
				return refuse(ReasonTypedReferenceEmpty, m, "a %s part has no call id", p.Kind)
			case p.Kind == PartAttachment && p.AttachmentID == "":
				return refuse(ReasonTypedReferenceEmpty, m, "an attachment part has no attachment id")
			case p.Kind == PartToolCall && ofTurn[[2]string{m.TurnID, p.CallID}]:
				return refuse(ReasonTypedReferenceDuplicate, m, "tool call %q is in its turn twice", p.CallID)
			case p.Kind == PartToolCall:
				calls[p.CallID], ofTurn[[2]string{m.TurnID, p.CallID}] = true, true
			}
		}
	}
	mapped := map[[2]string]string{}
	for _, m := range msgs {
		for _, p := range m.Parts {
			kind, id := refCall, p.CallID
			switch p.Kind {
			case PartToolResult:
				if !calls[p.CallID] {
					return refuse(ReasonTypedReferenceOutsidePrefix, m, "it answers tool call %q, which the prefix does not hold", p.CallID)
				}
			case PartAttachment:
				kind, id = refAttachment, p.AttachmentID
			case PartToolCall:
			default:
				continue
			}
			target := [2]string{kind, mapRef(kind, id)}
			if prior, taken := mapped[target]; taken && prior != id {
				return refuse(ReasonTypedReferenceCollision, m, "%s %q and %q would get one id in the child", kind, prior, id)
			}
			mapped[target] = id
		}
	}
	return nil
}

// checkReferenceShape says why RemapParts could not map every reference of p (a part of a kind
// it does not know, or an id in a field its kind does not carry, which the remap would pass to
// the child as the source's), or "".
func checkReferenceShape(p MessagePart) string {
	if !p.Kind.Valid() {
		return fmt.Sprintf("a part of kind %q holds references this server cannot map", p.Kind)
	}
	carriesCall := p.Kind == PartToolCall || p.Kind == PartToolResult
	if p.CallID != "" && !carriesCall || p.AttachmentID != "" && p.Kind != PartAttachment {
		return fmt.Sprintf("a %s part holds a reference in a field its kind does not carry", p.Kind)
	}
	return ""
}
