package forkengine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AuditMessage is a turn-less notice of a session (the reference's session_audit messages): the
// runtime's record that something changed between turns, such as "model changed". AfterSequence
// is its place in the transcript: the sequence of the session's latest turn when it was reported
// (0 before any), so it is drawn after that turn. A fork through turn B inherits the audit
// messages with AfterSequence < B: those reported before B began, copied with ids of its own.
type AuditMessage struct {
	WorkspaceID   string    `json:"workspaceId"`
	SessionID     string    `json:"sessionId"`
	ID            string    `json:"id"`
	AfterSequence int64     `json:"afterSequence"`
	Kind          string    `json:"kind"`
	Content       string    `json:"content"`
	CreatedAt     time.Time `json:"createdAt"`
}

// AuditReport is one audit message a runtime reports. ID is optional (the server makes one);
// re-sending an id with the same kind and content is a no-op.
type AuditReport struct {
	WorkspaceID string
	SessionID   string
	ID          string
	Kind        string
	Content     string
}

// ReportAuditMessage records a turn-less notice of a session and publishes SESSION_UPSERTED for
// it. Errors: BAD_USER_INPUT (ids; a kind that breaks the id rules; content over MaxMessageBytes
// or not storable, reason invalid_text; reason message_conflict for a known id with another
// session, kind or content), NOT_FOUND (session missing or deleted).
func (e *Engine) ReportAuditMessage(ctx context.Context, in AuditReport) (AuditMessage, error) {
	if in.ID == "" {
		in.ID = e.newID()
	}
	err := cleanIDs(idField{"workspaceId", &in.WorkspaceID}, idField{"sessionId", &in.SessionID},
		idField{"id", &in.ID}, idField{"kind", &in.Kind})
	if err == nil && len(in.Content) > MaxMessageBytes {
		err = Errorf(CodeInvalid, "content is larger than %d bytes", MaxMessageBytes)
	}
	if err == nil {
		err = checkStorable("content", in.Content)
	}
	if err != nil {
		return AuditMessage{}, err
	}
	var out AuditMessage
	err = e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(in.WorkspaceID, in.SessionID)); err != nil {
			return err
		}
		session, err := liveSession(ctx, tx, in.WorkspaceID, in.SessionID)
		if err != nil {
			return err
		}
		stored, err := tx.AuditMessagesByIDs(ctx, in.WorkspaceID, []string{in.ID})
		if err != nil {
			return fmt.Errorf("read audit message %s: %w", in.ID, err)
		}
		if prior, ok := stored[in.ID]; ok {
			if prior.SessionID != in.SessionID || prior.Kind != in.Kind || prior.Content != in.Content {
				return ReasonErrorf(CodeInvalid, ReasonMessageConflict, "audit message %q already exists with other content", in.ID)
			}
			out = prior
			return nil
		}
		latest, err := tx.LatestTurnsBySessionIDs(ctx, in.WorkspaceID, []string{in.SessionID})
		if err != nil {
			return fmt.Errorf("read the latest turn of %s: %w", in.SessionID, err)
		}
		out = AuditMessage{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, ID: in.ID,
			AfterSequence: latest[in.SessionID].Sequence, Kind: in.Kind, Content: in.Content, CreatedAt: c.at}
		if err := tx.InsertAuditMessages(ctx, []AuditMessage{out}); err != nil {
			return fmt.Errorf("insert audit message %s: %w", in.ID, err)
		}
		c.session(EventSessionUpserted, session)
		return nil
	})
	if errors.Is(err, ErrDuplicate) {
		err = ReasonErrorf(CodeInvalid, ReasonMessageConflict, "audit message id %q is taken", in.ID)
	}
	if err != nil {
		return AuditMessage{}, fmt.Errorf("report audit message of session %s: %w", in.SessionID, err)
	}
	return out, nil
}

// freezeAuditMessages are the source's audit messages a fork through boundary inherits.
func freezeAuditMessages(ctx context.Context, r Reader, ws, sourceID string, boundary int64) ([]AuditMessage, error) {
	all, err := r.AuditMessagesBySessionIDs(ctx, ws, []string{sourceID})
	if err != nil {
		return nil, fmt.Errorf("read the audit messages of %s: %w", sourceID, err)
	}
	var out []AuditMessage
	for _, m := range all[sourceID] {
		if m.AfterSequence < boundary {
			out = append(out, m)
		}
	}
	return out, nil
}

// childAuditMessages remaps the frozen audit messages into the child: its session, ids derived
// per operation. It fails closed (FORK_CONFLICT) on an empty or duplicate id and on one placed at
// or after the boundary.
func childAuditMessages(op ForkOperation, ids *forkIDs) ([]AuditMessage, error) {
	boundary, _ := op.Snapshot.through()
	seen := map[string]bool{}
	out := make([]AuditMessage, 0, len(op.Snapshot.AuditMessages))
	for _, src := range op.Snapshot.AuditMessages {
		switch {
		case src.ID == "":
			return nil, ReasonErrorf(CodeForkConflict, ReasonInteractionUnmappable, "a frozen audit message has an empty id")
		case seen[src.ID]:
			return nil, ReasonErrorf(CodeForkConflict, ReasonInteractionDuplicate, "frozen audit message %q is there twice", src.ID)
		case src.AfterSequence >= boundary.Sequence || src.SessionID != op.SourceSessionID:
			return nil, ReasonErrorf(CodeForkConflict, ReasonInteractionOutsidePrefix, "frozen audit message %q is outside the prefix", src.ID)
		}
		seen[src.ID] = true
		m := src
		m.SessionID, m.ID = op.TargetSessionID, ids.id("audit_message", src.ID)
		out = append(out, m)
	}
	return out, nil
}
