package forkengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Interaction reasons (BAD_USER_INPUT).
const (
	// ReasonInvalidInteraction: a kind, state, prompt or answer no interaction can have.
	ReasonInvalidInteraction = "invalid_interaction"
	// ReasonInteractionConflict: a report names a known interaction with another kind or prompt.
	ReasonInteractionConflict = "interaction_conflict"
	// ReasonInteractionSettled: a report would change an answered, canceled or superseded one.
	ReasonInteractionSettled = "interaction_settled"
)

// ReportInteraction creates or moves one permission or question prompt of a turn, keyed by the
// turn and the runtime's request id. A report equal to what is stored changes nothing and
// publishes nothing, so a runtime can retry; a pending interaction may move once, to answered
// (with an answer) or canceled. An interaction change is a change of its turn: it publishes
// TURN_UPSERTED for it, in the transaction's events. Errors: BAD_USER_INPUT (ids; reason
// invalid_interaction for an unknown kind or state, a runtime reporting superseded, a prompt
// that is not a JSON object, an answer that is not JSON or is missing from (or given to) a
// state that needs it (does not take it), either over MaxInteractionBytes; invalid_text;
// interaction_conflict for another kind or prompt under a known request id;
// interaction_settled for a change of a final one; a turn of another session), NOT_FOUND
// (session missing or deleted, turn missing).
func (e *Engine) ReportInteraction(ctx context.Context, in InteractionReport) (Interaction, error) {
	if err := cleanInteractionReport(&in); err != nil {
		return Interaction{}, err
	}
	var out Interaction
	err := e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(in.WorkspaceID, in.SessionID)); err != nil {
			return err
		}
		turn, err := turnOfLiveSession(ctx, tx, in.WorkspaceID, in.SessionID, in.TurnID)
		if err != nil {
			return err
		}
		in.TurnID = turn.ID // a presented id stays as it was named: reads key by it
		stored, err := tx.InteractionByRequest(ctx, in.WorkspaceID, in.TurnID, in.RequestID)
		found := err == nil
		if err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("read interaction %s of turn %s: %w", in.RequestID, in.TurnID, err)
		}
		next, changed, err := nextInteraction(stored, found, in, e.newID, c)
		if err != nil || !changed {
			out = next
			return err
		}
		if err := tx.UpsertInteraction(ctx, next); err != nil {
			return fmt.Errorf("write interaction %s of turn %s: %w", in.RequestID, in.TurnID, err)
		}
		c.turn(turn) // subscribers reload the turn, and its interactions with it
		out = next
		return nil
	})
	if err != nil {
		return Interaction{}, fmt.Errorf("report interaction %s of turn %s: %w", in.RequestID, in.TurnID, err)
	}
	return out, nil
}

// nextInteraction is the rule of a report: what the interaction becomes, and whether that is a
// change to write.
func nextInteraction(stored Interaction, found bool, in InteractionReport, newID func() string, c *changes) (Interaction, bool, error) {
	if !found {
		i := Interaction{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, TurnID: in.TurnID, ID: newID(),
			RequestID: in.RequestID, Kind: in.Kind, Prompt: in.Prompt, State: in.State, Answer: in.Answer,
			CreatedAt: c.at, UpdatedAt: c.at}
		if in.State != InteractionPending {
			at := c.at
			i.AnsweredAt = &at
		}
		return i, true, nil
	}
	if stored.SessionID != in.SessionID || stored.Kind != in.Kind || !sameJSON(stored.Prompt, in.Prompt) {
		return stored, false, ReasonErrorf(CodeInvalid, ReasonInteractionConflict,
			"interaction %q of turn %q already exists with another kind or prompt", in.RequestID, in.TurnID)
	}
	if stored.State == in.State && sameJSON(stored.Answer, in.Answer) {
		return stored, false, nil
	}
	if stored.State.Final() {
		return stored, false, ReasonErrorf(CodeInvalid, ReasonInteractionSettled,
			"interaction %q of turn %q is %s and cannot change", in.RequestID, in.TurnID, stored.State)
	}
	next := stored
	next.State, next.Answer, next.UpdatedAt = in.State, in.Answer, c.at
	if in.State != InteractionPending {
		at := c.at
		next.AnsweredAt = &at
	}
	return next, true, nil
}

func cleanInteractionReport(in *InteractionReport) error {
	err := cleanIDs(idField{"workspaceId", &in.WorkspaceID}, idField{"sessionId", &in.SessionID},
		idField{"turnId", &in.TurnID}, idField{"requestId", &in.RequestID})
	if err != nil {
		return err
	}
	invalid := func(format string, args ...any) error {
		return ReasonErrorf(CodeInvalid, ReasonInvalidInteraction, format, args...)
	}
	switch {
	case !in.Kind.Valid():
		return invalid("kind %q is not an interaction kind", in.Kind)
	case !in.State.Valid():
		return invalid("state %q is not an interaction state", in.State)
	case in.State == InteractionSuperseded:
		return invalid("state superseded is the server's: a runtime reports pending, answered or canceled")
	case len(in.Prompt) > MaxInteractionBytes || len(in.Answer) > MaxInteractionBytes:
		return invalid("prompt and answer are at most %d bytes each", MaxInteractionBytes)
	}
	prompt, ok := jsonObject(in.Prompt)
	if !ok || len(in.Prompt) == 0 {
		return invalid("prompt must be a JSON object")
	}
	if err := checkStorable("prompt", string(prompt)); err != nil {
		return err
	}
	in.Prompt = compactJSON(prompt)
	switch {
	case in.State == InteractionAnswered && len(in.Answer) == 0:
		return invalid("an answered interaction needs an answer")
	case in.State != InteractionAnswered && len(in.Answer) > 0:
		return invalid("only an answered interaction has an answer")
	case len(in.Answer) > 0 && !json.Valid(in.Answer):
		return invalid("answer must be JSON")
	}
	if len(in.Answer) > 0 {
		if err := checkStorable("answer", string(in.Answer)); err != nil {
			return err
		}
		in.Answer = compactJSON(in.Answer)
	}
	return nil
}

// compactJSON is raw without insignificant space, so a retried report compares and stores the
// same bytes whatever its formatting.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return json.RawMessage(b.Bytes())
}
