package forkengine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// AuditMessage is a turn-less notice of a session (the reference's session_audit messages): the
// runtime's record that something changed between turns, such as "model changed". AfterSequence
// is its place in the transcript: the sequence of the session's latest turn when it was reported
// (0 before any), so it is drawn after that turn. Position is its place on the workspace's
// history clock, the one messages take theirs from (the store assigns it on insert), so a fork
// frozen at watermark W inherits only audit messages at or below W (Snapshot.AuditBound).
//
// A fork through turn B inherits the audit messages with AfterSequence < B, those reported
// before B began: it reads them through its History like its turns and messages (never copies),
// presented under its session and an id of its own (PresentAuditMessage).
type AuditMessage struct {
	WorkspaceID   string    `json:"workspaceId"`
	SessionID     string    `json:"sessionId"`
	ID            string    `json:"id"`
	AfterSequence int64     `json:"afterSequence"`
	Kind          string    `json:"kind"`
	Content       string    `json:"content"`
	CreatedAt     time.Time `json:"createdAt"`
	// Position is 0 for a row stored before audit messages had one (migration 28), and -1 for
	// a copy a fork committed before then holds of an inherited one: the copy is its holder's
	// row, never read through a segment (InheritsAudit).
	Position int64 `json:"position,omitempty"`
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
		appended, err := tx.AppendAuditMessages(ctx, []AuditMessage{out})
		if err != nil {
			return fmt.Errorf("insert audit message %s: %w", in.ID, err)
		}
		out = appended[0]
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

// LegacyAuditBound is the AuditBound of a History committed before inherited audit messages
// were read through it (migration 28): such a child holds copies of them, so its segments give
// none.
const LegacyAuditBound = -1

// InheritsAudit reports whether the child with History h presents audit message m, a row of
// the owner of its segment g: h reads audit messages through its segments, m is placed in the
// range of turns g presents ([From, To): after one of them and before the next), and m was on
// the history clock when g was frozen (at or below its watermark, and the child's bound). A
// copy that a fork committed before migration 28 holds (Position -1) is its holder's alone.
// The SQL stores spell the same condition (auditsOfHistoriesSQL).
func InheritsAudit(h History, g HistorySegment, m AuditMessage) bool {
	return h.AuditBound >= 0 && m.Position >= 0 && m.Position <= g.Watermark && m.Position <= h.AuditBound &&
		g.From <= m.AfterSequence && m.AfterSequence < g.To
}

// presentedAudit is the kind of a presented audit message id.
const presentedAudit = "audit"

// PresentAuditMessage is m, an audit message of a segment's owner read through a segment whose
// Via is via, as the child with History h shows it: owned by the child, under an id derived from
// the one its source showed (so a grandchild's id is a function of its parent's), at the same
// AfterSequence (the child's turns keep their sequences) and Position.
func PresentAuditMessage(h History, via []string, m AuditMessage) AuditMessage {
	m.WorkspaceID, m.SessionID = h.WorkspaceID, h.SessionID
	m.ID = presentedRefVia(h.Key, via, presentedAudit, m.ID)
	return m
}

// PresentedAuditKey returns the history key of a presented audit message id (the form
// PresentAuditMessage gives), and whether id has that form.
func PresentedAuditKey(id string) (string, bool) {
	n := len(presentedPrefix) + HistoryKeyLength
	if len(id) != n+2+11 || !strings.HasPrefix(id, presentedPrefix) || id[n:n+2] != "-"+presentedAudit[:1] {
		return "", false
	}
	return id[len(presentedPrefix):n], true
}

// checkInheritedAudits fails a fork closed (FORK_CONFLICT) before the provider is asked for a
// child when the audit messages the child would present through its segments cannot all be
// given an id of their own: one with an empty id, the same source id twice, or two that would
// present under the same id (reference §6.2). It reads the source's audit messages (they are
// few: one per notice between turns) as the source presents them, those before the boundary.
func checkInheritedAudits(ctx context.Context, r Reader, source Session, boundary Turn, childKey string) error {
	all, err := r.AuditMessagesBySessionIDs(ctx, source.WorkspaceID, []string{source.ID})
	if err != nil {
		return fmt.Errorf("read the audit messages of %s: %w", source.ID, err)
	}
	seen, presented := map[string]bool{}, map[string]bool{}
	for _, m := range all[source.ID] {
		if m.AfterSequence >= boundary.Sequence {
			continue
		}
		id := presentedRef(childKey, presentedAudit, m.ID)
		switch {
		case m.ID == "":
			return ReasonErrorf(CodeForkConflict, ReasonInteractionUnmappable, "an audit message of the prefix has an empty id")
		case seen[m.ID]:
			return ReasonErrorf(CodeForkConflict, ReasonInteractionDuplicate, "audit message %q of the prefix is there twice", m.ID)
		case presented[id]:
			return ReasonErrorf(CodeForkConflict, ReasonInteractionDuplicate, "audit message %q collides in the child", m.ID)
		}
		seen[m.ID], presented[id] = true, true
	}
	return nil
}
