package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// AppendMessages appends messages to a turn of a session, in the order given. A message without an
// id gets a generated one. Re-sending a message id with the same role and content is a no-op (the
// stored message is returned in its place), so a runtime can retry an append safely. Errors:
// BAD_USER_INPUT (ids, roles, content over 1 MiB, content that is not valid UTF-8 or holds NUL
// with reason invalid_text, more than 1000 messages, a turn of another session, reason
// message_conflict for a known id with other content), NOT_FOUND (session missing or deleted,
// turn missing).
func (e *Engine) AppendMessages(ctx context.Context, in MessageAppend) ([]Message, error) {
	if err := e.cleanMessageAppend(&in); err != nil {
		return nil, err
	}
	out, err := e.appendMessages(ctx, in)
	if errors.Is(err, ErrDuplicate) {
		// Message ids are unique per workspace, but the session lock only keeps appends to one
		// session apart: an append to another session inserted one of our ids after we read the
		// known ones. Running the append again reads it and answers as if we had come second.
		out, err = e.appendMessages(ctx, in)
	}
	if err != nil {
		return nil, fmt.Errorf("append messages to turn %s: %w", in.TurnID, err)
	}
	return out, nil
}

// appendMessages is one attempt of AppendMessages in one transaction. ErrDuplicate when a
// concurrent transaction inserted one of the ids after this one read them.
func (e *Engine) appendMessages(ctx context.Context, in MessageAppend) ([]Message, error) {
	var out []Message
	err := e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(in.WorkspaceID, in.SessionID)); err != nil {
			return err
		}
		turn, err := turnOfLiveSession(ctx, tx, in.WorkspaceID, in.SessionID, in.TurnID)
		if err != nil {
			return err
		}
		known, fresh, err := splitKnownMessages(ctx, tx, in, c)
		if err != nil || len(fresh) == 0 {
			out = known.inOrder(in.Messages)
			return err
		}
		if err := checkToolResults(ctx, tx, in, fresh); err != nil {
			return err
		}
		inserted, err := tx.InsertMessages(ctx, fresh)
		if err != nil {
			return fmt.Errorf("insert messages into turn %s: %w", in.TurnID, err)
		}
		for _, m := range inserted {
			known[m.ID] = m
		}
		c.turn(turn) // a turn's transcript changed: subscribers reload the turn
		out = known.inOrder(in.Messages)
		return nil
	})
	return out, err
}

func (e *Engine) cleanMessageAppend(in *MessageAppend) error {
	err := cleanIDs(idField{"workspaceId", &in.WorkspaceID}, idField{"sessionId", &in.SessionID}, idField{"turnId", &in.TurnID})
	if err != nil {
		return err
	}
	if len(in.Messages) > MaxMessagesPerAppend {
		return Errorf(CodeInvalid, "at most %d messages per append (got %d)", MaxMessagesPerAppend, len(in.Messages))
	}
	msgs := make([]MessageInput, len(in.Messages))
	for i, m := range in.Messages {
		if m.ID == "" {
			m.ID = e.newID()
		}
		if m.ID, err = cleanID(fmt.Sprintf("messages[%d].id", i), m.ID); err != nil {
			return err
		}
		if !m.Role.Valid() {
			return Errorf(CodeInvalid, "messages[%d].role %q is not a message role", i, m.Role)
		}
		if m.Parts != nil {
			if m.Content != "" {
				return ReasonErrorf(CodeInvalid, ReasonContentWithParts, "messages[%d] has both content and parts; give one", i)
			}
			if len(m.Parts) == 0 {
				return ReasonErrorf(CodeInvalid, ReasonInvalidMessagePart, "messages[%d].parts is empty", i)
			}
			if m.Parts, err = cleanParts(i, m.Parts); err != nil {
				return err
			}
			m.Content = RenderParts(m.Parts)
		}
		if len(m.Content) > MaxMessageBytes {
			return Errorf(CodeInvalid, "messages[%d].content is larger than %d bytes", i, MaxMessageBytes)
		}
		if err := checkStorable(fmt.Sprintf("messages[%d].content", i), m.Content); err != nil {
			return err
		}
		msgs[i] = m
	}
	in.Messages = msgs // a copy: the caller's slice keeps its empty ids
	return nil
}

// turnOfLiveSession reads a turn that must belong to a live session.
func turnOfLiveSession(ctx context.Context, r Reader, workspaceID, sessionID, turnID string) (Turn, error) {
	if _, err := liveSession(ctx, r, workspaceID, sessionID); err != nil {
		return Turn{}, err
	}
	turn, err := r.GetTurn(ctx, workspaceID, turnID)
	if err != nil {
		return Turn{}, readError(err, "turn", turnID)
	}
	if turn.SessionID != sessionID {
		return Turn{}, Errorf(CodeInvalid, "turn %q belongs to another session", turnID)
	}
	return turn, nil
}

// messagesByID holds the messages of one append that are already stored (or just inserted).
type messagesByID map[string]Message

func (m messagesByID) inOrder(in []MessageInput) []Message {
	out := make([]Message, 0, len(in))
	seen := map[string]bool{}
	for _, msg := range in {
		if stored, ok := m[msg.ID]; ok && !seen[msg.ID] {
			out = append(out, stored)
			seen[msg.ID] = true
		}
	}
	return out
}

// splitKnownMessages separates the stored messages an append repeats from the new ones to insert.
// A repeated id must carry the same turn, role and content; the same id twice in one append must
// too.
func splitKnownMessages(ctx context.Context, tx Tx, in MessageAppend, c *changes) (messagesByID, []Message, error) {
	ids := make([]string, len(in.Messages))
	for i, m := range in.Messages {
		ids[i] = m.ID
	}
	stored, err := tx.MessagesByIDs(ctx, in.WorkspaceID, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("read messages: %w", err)
	}
	known := messagesByID{}
	pending := map[string]Message{}
	var fresh []Message
	for _, m := range in.Messages {
		candidate := Message{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, TurnID: in.TurnID,
			ID: m.ID, Role: m.Role, Content: m.Content, Parts: m.Parts, CreatedAt: c.at}
		prior, ok := stored[m.ID]
		if !ok {
			prior, ok = pending[m.ID]
		}
		switch {
		case ok && !sameMessage(prior, candidate):
			return nil, nil, ReasonErrorf(CodeInvalid, ReasonMessageConflict,
				"message %q already exists with other content", m.ID)
		case ok:
			if _, isStored := stored[m.ID]; isStored {
				known[m.ID] = prior
			}
		default:
			pending[m.ID] = candidate
			fresh = append(fresh, candidate)
		}
	}
	return known, fresh, nil
}

func sameMessage(a, b Message) bool {
	return a.SessionID == b.SessionID && a.TurnID == b.TurnID && a.Role == b.Role && a.Content == b.Content &&
		sameParts(a.Parts, b.Parts)
}

// checkToolResults refuses a tool result whose call id names no tool call of its turn, stored or
// earlier in the same append: a fork rewrites call ids, and a result it could not pair with its
// call would point nowhere in the child. The turn's messages are read only when a result names a
// call the append does not hold. Errors: BAD_USER_INPUT reason tool_call_unknown.
func checkToolResults(ctx context.Context, r Reader, in MessageAppend, fresh []Message) error {
	calls := map[string]bool{}
	var stored map[string]bool
	for _, m := range fresh {
		toolCallsOf([]Message{m}, calls)
		for _, p := range m.Parts {
			if p.Kind != PartToolResult || calls[p.CallID] {
				continue
			}
			if stored == nil {
				byTurn, err := r.MessagesByTurnIDs(ctx, in.WorkspaceID, []string{in.TurnID})
				if err != nil {
					return fmt.Errorf("read the tool calls of turn %s: %w", in.TurnID, err)
				}
				stored = map[string]bool{}
				toolCallsOf(byTurn[in.TurnID], stored)
			}
			if !stored[p.CallID] {
				return ReasonErrorf(CodeInvalid, ReasonToolCallUnknown,
					"message %q answers tool call %q, which turn %q does not hold", m.ID, p.CallID, in.TurnID)
			}
		}
	}
	return nil
}
