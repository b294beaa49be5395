package forkenginetest

import (
	"context"
	"slices"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The paged reads of forkengine.PageReader over the in-memory state: the whole list is built as
// the unpaged reads build it and cut to the window, which is what the SQL stores must agree with.

// transcript is a session's messages in transcript order, each with its turn's sequence.
func (st *memState) transcript(ws, sessionID string) (msgs []forkengine.TranscriptMessage) {
	for _, t := range st.sessionTurns(ws, sessionID) {
		for _, m := range st.turnMessages(t) {
			msgs = append(msgs, forkengine.TranscriptMessage{Message: m, Sequence: t.Sequence})
		}
	}
	return msgs
}

// SessionMessagesAfter returns per session up to limit messages after the cursor.
func (v memView) SessionMessagesAfter(_ context.Context, ws string, sessionIDs []string, after forkengine.MessageCursor, limit int) (map[string][]forkengine.TranscriptMessage, error) {
	st := v.load()
	out := map[string][]forkengine.TranscriptMessage{}
	for sid := range idSet(sessionIDs) {
		var page []forkengine.TranscriptMessage
		for _, m := range st.transcript(ws, sid) {
			if after.After(m.Sequence, m.Position) {
				page = append(page, m)
			}
		}
		if len(page) > 0 {
			out[sid] = limited(page, limit)
		}
	}
	return out, nil
}

// SessionMessagesBefore returns per session up to limit messages before the cursor, nearest first.
func (v memView) SessionMessagesBefore(_ context.Context, ws string, sessionIDs []string, before forkengine.MessageCursor, limit int) (map[string][]forkengine.TranscriptMessage, error) {
	st := v.load()
	out := map[string][]forkengine.TranscriptMessage{}
	for sid := range idSet(sessionIDs) {
		msgs := st.transcript(ws, sid)
		var page []forkengine.TranscriptMessage
		for i := len(msgs) - 1; i >= 0; i-- {
			if before.Before(msgs[i].Sequence, msgs[i].Position) {
				page = append(page, msgs[i])
			}
		}
		if len(page) > 0 {
			out[sid] = limited(page, limit)
		}
	}
	return out, nil
}

// CountSessionMessages counts each session's transcript.
func (v memView) CountSessionMessages(_ context.Context, ws string, sessionIDs []string) (map[string]int, error) {
	st := v.load()
	out := map[string]int{}
	for sid := range idSet(sessionIDs) {
		if msgs := st.transcript(ws, sid); len(msgs) > 0 {
			out[sid] = len(msgs)
		}
	}
	return out, nil
}

// turnMessagesByID are the messages of the turn named id (stored or presented), in Position order.
func (st *memState) turnMessagesByID(ws, id string) []forkengine.Message {
	t, ok := st.turnByID(ws, id)
	if !ok {
		t = forkengine.Turn{WorkspaceID: ws, ID: id}
	}
	return st.turnMessages(t)
}

// TurnMessagesAfter returns per turn up to limit messages after afterPosition.
func (v memView) TurnMessagesAfter(_ context.Context, ws string, turnIDs []string, afterPosition int64, limit int) (map[string][]forkengine.Message, error) {
	st := v.load()
	out := map[string][]forkengine.Message{}
	for id := range idSet(turnIDs) {
		var page []forkengine.Message
		for _, m := range st.turnMessagesByID(ws, id) {
			if m.Position > afterPosition {
				page = append(page, m)
			}
		}
		if len(page) > 0 {
			out[id] = limited(page, limit)
		}
	}
	return out, nil
}

// TurnMessagesBefore returns per turn up to limit messages before beforePosition, nearest first.
func (v memView) TurnMessagesBefore(_ context.Context, ws string, turnIDs []string, beforePosition int64, limit int) (map[string][]forkengine.Message, error) {
	st := v.load()
	out := map[string][]forkengine.Message{}
	for id := range idSet(turnIDs) {
		msgs := st.turnMessagesByID(ws, id)
		var page []forkengine.Message
		for i := len(msgs) - 1; i >= 0; i-- {
			if beforePosition <= 0 || msgs[i].Position < beforePosition {
				page = append(page, msgs[i])
			}
		}
		if len(page) > 0 {
			out[id] = limited(page, limit)
		}
	}
	return out, nil
}

// CountTurnMessages counts each turn's messages.
func (v memView) CountTurnMessages(_ context.Context, ws string, turnIDs []string) (map[string]int, error) {
	st := v.load()
	out := map[string]int{}
	for id := range idSet(turnIDs) {
		if n := len(st.turnMessagesByID(ws, id)); n > 0 {
			out[id] = n
		}
	}
	return out, nil
}

// LineagesBySourceIDsAfter returns per source up to limit lineages after the cursor.
func (v memView) LineagesBySourceIDsAfter(ctx context.Context, ws string, sourceIDs []string, after forkengine.PageCursor, limit int) (map[string][]forkengine.Lineage, error) {
	all, _ := v.LineagesBySourceIDs(ctx, ws, sourceIDs)
	out := map[string][]forkengine.Lineage{}
	for sid, ls := range all {
		var page []forkengine.Lineage
		for _, l := range ls {
			if afterKey(after, l.ForkedAt, l.TargetSessionID) {
				page = append(page, l)
			}
		}
		if len(page) > 0 {
			out[sid] = limited(page, limit)
		}
	}
	return out, nil
}

// LineagesBySourceIDsBefore returns per source up to limit lineages before the cursor, newest first.
func (v memView) LineagesBySourceIDsBefore(ctx context.Context, ws string, sourceIDs []string, before forkengine.PageCursor, limit int) (map[string][]forkengine.Lineage, error) {
	all, _ := v.LineagesBySourceIDs(ctx, ws, sourceIDs)
	out := map[string][]forkengine.Lineage{}
	for sid, ls := range all {
		var page []forkengine.Lineage
		for _, l := range slices.Backward(ls) {
			if before.IsZero() || compareKey(l.ForkedAt, l.TargetSessionID, before.Time, before.ID) < 0 {
				page = append(page, l)
			}
		}
		if len(page) > 0 {
			out[sid] = limited(page, limit)
		}
	}
	return out, nil
}

// CountLineagesBySourceIDs counts each source's lineages.
func (v memView) CountLineagesBySourceIDs(ctx context.Context, ws string, sourceIDs []string) (map[string]int, error) {
	all, _ := v.LineagesBySourceIDs(ctx, ws, sourceIDs)
	out := make(map[string]int, len(all))
	for sid, ls := range all {
		out[sid] = len(ls)
	}
	return out, nil
}
