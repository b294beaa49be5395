package forkenginetest

import (
	"cmp"
	"context"
	"slices"

	"github.com/forkgraph/forkgraph/forkengine"
)

// InteractionsByTurnIDs returns each turn's interactions in (CreatedAt, ID) order.
func (v memView) InteractionsByTurnIDs(_ context.Context, ws string, turnIDs []string) (map[string][]forkengine.Interaction, error) {
	want := idSet(turnIDs)
	out := map[string][]forkengine.Interaction{}
	for k, i := range v.load().interactions {
		if k.ws == ws && want[i.TurnID] {
			out[i.TurnID] = append(out[i.TurnID], i.Clone())
		}
	}
	for _, is := range out {
		slices.SortFunc(is, func(a, b forkengine.Interaction) int {
			return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
	}
	return out, nil
}

// InteractionsByIDs returns the interactions that exist among ids.
func (v memView) InteractionsByIDs(_ context.Context, ws string, ids []string) (map[string]forkengine.Interaction, error) {
	st := v.load()
	out := map[string]forkengine.Interaction{}
	for _, id := range ids {
		if i, ok := st.interactions[rowKey{ws, id}]; ok {
			out[id] = i.Clone()
		}
	}
	return out, nil
}

// InteractionByRequest returns the turn's interaction of requestID, or ErrNotFound.
func (v memView) InteractionByRequest(_ context.Context, ws, turnID, requestID string) (forkengine.Interaction, error) {
	if i, ok := v.load().interactionOf(ws, turnID, requestID); ok {
		return i.Clone(), nil
	}
	return forkengine.Interaction{}, notFound("interaction of turn "+turnID, ws, requestID)
}

func (st *memState) interactionOf(ws, turnID, requestID string) (forkengine.Interaction, bool) {
	for k, i := range st.interactions {
		if k.ws == ws && i.TurnID == turnID && i.RequestID == requestID {
			return i, true
		}
	}
	return forkengine.Interaction{}, false
}

// UpsertInteraction writes i over the row of its id; ErrDuplicate when another id holds its
// (turn, request id).
func (tx *memTx) UpsertInteraction(_ context.Context, i forkengine.Interaction) error {
	st := tx.current()
	if err := st.ownedByItsTurnsSession(i); err != nil {
		return err
	}
	if other, ok := st.interactionOf(i.WorkspaceID, i.TurnID, i.RequestID); ok && other.ID != i.ID {
		return duplicate("turn %s already has interaction %s", i.TurnID, i.RequestID)
	}
	st.interactions[rowKey{i.WorkspaceID, i.ID}] = storedInteraction(i)
	return nil
}

// InsertInteractions inserts new interactions, all or none.
func (tx *memTx) InsertInteractions(_ context.Context, is []forkengine.Interaction) error {
	st := tx.current()
	seen := map[[3]string]bool{}
	for _, i := range is {
		if err := st.ownedByItsTurnsSession(i); err != nil {
			return err
		}
		key := [3]string{i.WorkspaceID, i.TurnID, i.RequestID}
		_, taken := st.interactions[rowKey{i.WorkspaceID, i.ID}]
		_, held := st.interactionOf(i.WorkspaceID, i.TurnID, i.RequestID)
		if taken || held || seen[key] || seen[[3]string{i.WorkspaceID, "id", i.ID}] {
			return duplicate("interaction %s (%s of turn %s) exists", i.ID, i.RequestID, i.TurnID)
		}
		seen[key], seen[[3]string{i.WorkspaceID, "id", i.ID}] = true, true
	}
	for _, i := range is {
		st.interactions[rowKey{i.WorkspaceID, i.ID}] = storedInteraction(i)
	}
	return nil
}

// storedInteraction is i as the SQL store reads it back: times at microseconds, its own bytes.
func storedInteraction(i forkengine.Interaction) forkengine.Interaction {
	i = i.Clone()
	i.CreatedAt, i.UpdatedAt, i.AnsweredAt = storedTime(i.CreatedAt), storedTime(i.UpdatedAt), storedTimePtr(i.AnsweredAt)
	return i
}

// AuditMessagesBySessionIDs returns each session's audit messages, its own and those its
// History presents, in (AfterSequence, Position, CreatedAt, ID) order.
func (v memView) AuditMessagesBySessionIDs(_ context.Context, ws string, sessionIDs []string) (map[string][]forkengine.AuditMessage, error) {
	st := v.load()
	out := map[string][]forkengine.AuditMessage{}
	for _, id := range sessionIDs {
		if ms := st.sessionAudits(ws, id); len(ms) > 0 {
			out[id] = ms
		}
	}
	return out, nil
}

// ownAudits are the audit messages stored under the session.
func (st *memState) ownAudits(ws, sessionID string) []forkengine.AuditMessage {
	var out []forkengine.AuditMessage
	for k, m := range st.audits {
		if k.ws == ws && m.SessionID == sessionID {
			out = append(out, m)
		}
	}
	return out
}

// sessionAudits are the session's own audit messages and those its History's segments present.
func (st *memState) sessionAudits(ws, sessionID string) []forkengine.AuditMessage {
	out := st.ownAudits(ws, sessionID)
	if h, ok := st.histories[rowKey{ws, sessionID}]; ok {
		for _, g := range h.Segments {
			for _, m := range st.ownAudits(g.OwnerWorkspaceID, g.OwnerSessionID) {
				if forkengine.InheritsAudit(h, g, m) {
					out = append(out, forkengine.PresentAuditMessage(h, g.Via, m))
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b forkengine.AuditMessage) int {
		return cmp.Or(cmp.Compare(a.AfterSequence, b.AfterSequence), cmp.Compare(a.Position, b.Position),
			a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// AuditMessagesByIDs returns the audit messages that exist among ids, stored or presented.
func (v memView) AuditMessagesByIDs(_ context.Context, ws string, ids []string) (map[string]forkengine.AuditMessage, error) {
	st := v.load()
	out := map[string]forkengine.AuditMessage{}
	for _, id := range ids {
		if m, ok := st.audits[rowKey{ws, id}]; ok {
			out[id] = m
			continue
		}
		key, ok := forkengine.PresentedAuditKey(id)
		if !ok {
			continue
		}
		if h, ok := st.historyByKey(ws, key); ok {
			for _, m := range st.sessionAudits(ws, h.SessionID) {
				if m.ID == id {
					out[id] = m
				}
			}
		}
	}
	return out, nil
}

// AppendAuditMessages inserts new audit messages, all or none, on the history clock.
func (tx *memTx) AppendAuditMessages(_ context.Context, ms []forkengine.AuditMessage) ([]forkengine.AuditMessage, error) {
	st := tx.current()
	seen := map[rowKey]bool{}
	for _, m := range ms {
		k := rowKey{m.WorkspaceID, m.ID}
		if _, taken := st.audits[k]; taken || seen[k] {
			return nil, duplicate("audit message %s exists", m.ID)
		}
		seen[k] = true
	}
	out := make([]forkengine.AuditMessage, 0, len(ms))
	for _, m := range ms {
		m.CreatedAt = storedTime(m.CreatedAt)
		st.positions[m.WorkspaceID]++ // the history clock messages take theirs from
		m.Position = st.positions[m.WorkspaceID]
		st.audits[rowKey{m.WorkspaceID, m.ID}] = m
		out = append(out, m)
	}
	return out, nil
}

// ownedByItsTurnsSession refuses an interaction whose turn is stored under another session, as
// the SQL stores' trigger does (store's interactionOwnerMigration); an interaction of a turn
// that is not stored (an inherited turn's presented id) is not checked.
func (st *memState) ownedByItsTurnsSession(i forkengine.Interaction) error {
	if t, ok := st.turns[rowKey{i.WorkspaceID, i.TurnID}]; ok && t.SessionID != i.SessionID {
		return notFound("turn "+i.TurnID+" of session "+i.SessionID, i.WorkspaceID, i.ID)
	}
	return nil
}
