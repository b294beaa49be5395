package forkenginetest

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Shared history in the in-memory store, by the rules the SQL stores follow: a session's turns
// are its own rows merged with the rows its History's segments read (later segments, then its
// own rows, win at a shared sequence), each inherited row presented as the child's.

// HistoryOf returns the session's History.
func (v memView) HistoryOf(_ context.Context, ws, sessionID string) (forkengine.History, bool, error) {
	h, ok := v.load().histories[rowKey{ws, sessionID}]
	return copyHistory(h), ok, nil
}

// HistoryClock returns the last message position handed out in the workspace.
func (v memView) HistoryClock(_ context.Context, ws string) (int64, error) {
	return v.load().positions[ws], nil
}

func copyHistory(h forkengine.History) forkengine.History {
	h.Segments = slices.Clone(h.Segments)
	for i := range h.Segments {
		h.Segments[i].Via = slices.Clone(h.Segments[i].Via)
	}
	return h
}

// ownTurns are the turns stored under the session, by sequence.
func (st *memState) ownTurns(ws, sessionID string) []forkengine.Turn {
	var out []forkengine.Turn
	for k, t := range st.turns {
		if k.ws == ws && t.SessionID == sessionID {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b forkengine.Turn) int { return cmp.Compare(a.Sequence, b.Sequence) })
	return out
}

// sessionTurns are the turns the session presents, in sequence order.
func (st *memState) sessionTurns(ws, sessionID string) []forkengine.Turn {
	h, ok := st.histories[rowKey{ws, sessionID}]
	if !ok {
		return st.ownTurns(ws, sessionID)
	}
	bySeq := map[int64]forkengine.Turn{}
	for _, g := range h.Segments {
		for _, t := range st.ownTurns(g.OwnerWorkspaceID, g.OwnerSessionID) {
			if g.From < t.Sequence && t.Sequence <= g.To {
				bySeq[t.Sequence] = forkengine.PresentTurn(h, t)
			}
		}
	}
	for _, t := range st.ownTurns(ws, sessionID) {
		bySeq[t.Sequence] = t
	}
	out := make([]forkengine.Turn, 0, len(bySeq))
	for _, t := range bySeq {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b forkengine.Turn) int { return cmp.Compare(a.Sequence, b.Sequence) })
	return out
}

// historyByKey finds the History whose key is key.
func (st *memState) historyByKey(ws, key string) (forkengine.History, bool) {
	for k, h := range st.histories {
		if k.ws == ws && h.Key == key {
			return h, true
		}
	}
	return forkengine.History{}, false
}

// presentedTurn resolves a presented turn id the session has no row for.
func (st *memState) presentedTurn(ws, id string) (forkengine.Turn, bool) {
	key, seq, ok := forkengine.ParsePresentedTurnID(id)
	if !ok {
		return forkengine.Turn{}, false
	}
	h, ok := st.historyByKey(ws, key)
	if !ok || seq > h.Boundary {
		return forkengine.Turn{}, false
	}
	for _, t := range st.sessionTurns(ws, h.SessionID) {
		if t.Sequence == seq {
			return t, t.ID == id
		}
	}
	return forkengine.Turn{}, false
}

// turnByID is the stored turn with id, or the inherited turn it presents.
func (st *memState) turnByID(ws, id string) (forkengine.Turn, bool) {
	if t, ok := st.turns[rowKey{ws, id}]; ok {
		return t, true
	}
	return st.presentedTurn(ws, id)
}

// turnMessages are the messages of turn t of its session: those stored under its id, and for an
// inherited sequence those of every segment presenting it, up to the segment's watermark.
func (st *memState) turnMessages(t forkengine.Turn) []forkengine.Message {
	ws := t.WorkspaceID
	var out []forkengine.Message
	for k, m := range st.messages {
		if k.ws == ws && m.TurnID == t.ID {
			out = append(out, m)
		}
	}
	if h, ok := st.histories[rowKey{ws, t.SessionID}]; ok && t.Sequence <= h.Boundary {
		for _, g := range h.Segments {
			if t.Sequence <= g.From || t.Sequence > g.To {
				continue
			}
			for _, owned := range st.ownTurns(g.OwnerWorkspaceID, g.OwnerSessionID) {
				if owned.Sequence != t.Sequence {
					continue
				}
				for k, m := range st.messages {
					if k.ws == g.OwnerWorkspaceID && m.TurnID == owned.ID && m.Position <= g.Watermark {
						out = append(out, forkengine.PresentMessage(h, g.Via, t.Sequence, m))
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b forkengine.Message) int { return cmp.Compare(a.Position, b.Position) })
	return out
}

// presentedMessage resolves a presented message id.
func (st *memState) presentedMessage(ws, id string) (forkengine.Message, bool) {
	key, seq, _, ok := forkengine.ParsePresentedMessageID(id)
	if !ok {
		return forkengine.Message{}, false
	}
	h, ok := st.historyByKey(ws, key)
	if !ok {
		return forkengine.Message{}, false
	}
	t, ok := st.turnByID(ws, forkengine.PresentedTurnID(key, seq))
	if !ok {
		return forkengine.Message{}, false
	}
	if t.SessionID != h.SessionID {
		return forkengine.Message{}, false
	}
	for _, m := range st.turnMessages(t) {
		if m.ID == id {
			return m, true
		}
	}
	return forkengine.Message{}, false
}

// InsertHistory stores h; ErrDuplicate when the session or the key has one.
func (tx *memTx) InsertHistory(_ context.Context, h forkengine.History) error {
	st := tx.current()
	if _, taken := st.histories[rowKey{h.WorkspaceID, h.SessionID}]; taken {
		return duplicate("history of session %s", h.SessionID)
	}
	if _, taken := st.historyByKey(h.WorkspaceID, h.Key); taken {
		return duplicate("history key %s", h.Key)
	}
	st.histories[rowKey{h.WorkspaceID, h.SessionID}] = copyHistory(h)
	return nil
}

// adoptInheritedTurn gives the session of a presented turn a row of its own for it (a message is
// appended to it), as the SQL stores do, and reports whether id named such a turn.
func (st *memState) adoptInheritedTurn(ws, id string) bool {
	if _, ok := st.turns[rowKey{ws, id}]; ok {
		return false
	}
	t, ok := st.presentedTurn(ws, id)
	if !ok {
		return false
	}
	st.turns[rowKey{ws, id}] = t
	k := rowKey{ws, t.SessionID}
	h := st.histories[k]
	h.InheritedTurns--
	st.histories[k] = h
	return true
}

// purgeHistory keeps the rows of a purged session that histories still read, moving them to a
// tombstone workspace no client can name, and frees the tombstones that the purged session's
// own history was the last to read.
func (st *memState) purgeHistory(ws, id string) {
	owned, freed := st.histories[rowKey{ws, id}]
	delete(st.histories, rowKey{ws, id})
	if st.readBy(ws, id) {
		st.tombstones++
		tomb := "\x01purged/" + strconv.Itoa(st.tombstones)
		for k, t := range st.turns {
			if k.ws == ws && t.SessionID == id {
				delete(st.turns, k)
				t.WorkspaceID = tomb
				st.turns[rowKey{tomb, k.id}] = t
			}
		}
		for k, m := range st.messages {
			if k.ws == ws && m.SessionID == id {
				delete(st.messages, k)
				m.WorkspaceID = tomb
				st.messages[rowKey{tomb, k.id}] = m
			}
		}
		for k, m := range st.audits {
			if k.ws == ws && m.SessionID == id {
				delete(st.audits, k)
				m.WorkspaceID = tomb
				st.audits[rowKey{tomb, k.id}] = m
			}
		}
		for k, h := range st.histories {
			h.Segments = slices.Clone(h.Segments) // committed states share the slice
			for i, g := range h.Segments {
				if g.OwnerWorkspaceID == ws && g.OwnerSessionID == id {
					h.Segments[i].OwnerWorkspaceID = tomb
				}
			}
			st.histories[k] = h
		}
	}
	if !freed {
		return
	}
	for _, g := range owned.Segments {
		if g.OwnerWorkspaceID != ws && !st.readBy(g.OwnerWorkspaceID, g.OwnerSessionID) {
			for k := range st.turns {
				if k.ws == g.OwnerWorkspaceID {
					delete(st.turns, k)
				}
			}
			for k := range st.messages {
				if k.ws == g.OwnerWorkspaceID {
					delete(st.messages, k)
				}
			}
			for k := range st.audits {
				if k.ws == g.OwnerWorkspaceID {
					delete(st.audits, k)
				}
			}
		}
	}
}

// readBy reports whether a History reads rows of the owner.
func (st *memState) readBy(ws, owner string) bool {
	for _, h := range st.histories {
		for _, g := range h.Segments {
			if g.OwnerWorkspaceID == ws && g.OwnerSessionID == owner {
				return true
			}
		}
	}
	return false
}
