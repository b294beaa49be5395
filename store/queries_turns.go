package store

import (
	"context"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

var getTurnSQL = "SELECT " + turnSelectList + " FROM turns WHERE workspace_id = ? AND id = ?"

// GetTurn returns one turn, or ErrNotFound.
func (q queries) GetTurn(ctx context.Context, ws, id string) (forkengine.Turn, error) {
	rows, err := queryAll(ctx, q, turnsTable, getTurnSQL, ws, id)
	if err != nil {
		return forkengine.Turn{}, classify(err, "get turn %s", id)
	}
	if len(rows) > 0 {
		return rows[0], nil
	}
	presented := map[string]forkengine.Turn{}
	if err := q.presentedTurns(ctx, ws, []string{id}, presented); err != nil {
		return forkengine.Turn{}, err
	}
	if t, ok := presented[id]; ok {
		return t, nil
	}
	return forkengine.Turn{}, notFound("turn", ws, id)
}

// TurnsByIDs returns the existing turns among ids, keyed by id: stored rows, and the inherited
// turns presented ids name (a second statement, only when some id is presented and not stored).
func (q queries) TurnsByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.Turn, error) {
	out := make(map[string]forkengine.Turn, len(ids))
	if err := q.physicalTurns(ctx, ws, ids, out); err != nil {
		return nil, err
	}
	return out, q.presentedTurns(ctx, ws, ids, out)
}

// TurnsBySessionIDs returns, per session, up to limit (<= 0: all) turns with Sequence >
// afterSequence in sequence order, inherited ones included. Sessions without such turns are
// absent. One statement per chunk of sessions, at any fork depth.
func (q queries) TurnsBySessionIDs(ctx context.Context, ws string, sessionIDs []string, afterSequence int64, n int) (map[string][]forkengine.Turn, error) {
	out := map[string][]forkengine.Turn{}
	err := q.readTurnSpans(ctx, ws, sessionIDs, n, false, func(chunk []string) (string, []any) {
		return turnsAfterSQL(q.dialect, len(chunk), n), turnsAfterArgs(q.dialect, chunk, ws, afterSequence, n)
	}, out)
	return out, err
}

// LatestTurnsBySessionIDs returns each session's highest-sequence turn, inherited or its own.
func (q queries) LatestTurnsBySessionIDs(ctx context.Context, ws string, sessionIDs []string) (map[string]forkengine.Turn, error) {
	out := make(map[string]forkengine.Turn, len(sessionIDs))
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		return q.latestTurnSpans(ctx, ws, turnsBeforeSQL(q.dialect, len(chunk), 1, true),
			turnsBeforeArgs(q.dialect, chunk, ws, maxSequence, 1, true), out)
	})
	return out, err
}

// ActiveTurnsBySessionIDs returns each session's highest-sequence turn that is not settled. Only
// a session's own rows can be: every inherited turn was settled when its fork was frozen (a
// prefix turn that was not is a row of the child's own, settled as interrupted).
func (q queries) ActiveTurnsBySessionIDs(ctx context.Context, ws string, sessionIDs []string) (map[string]forkengine.Turn, error) {
	return q.turnPerSession(ctx, unsettled, ws, sessionIDs)
}

// turnPerSession reads each session's last turn among those extra keeps (lastTurnSQL).
func (q queries) turnPerSession(ctx context.Context, extra turnCondition, ws string, sessionIDs []string) (map[string]forkengine.Turn, error) {
	out := make(map[string]forkengine.Turn, len(sessionIDs))
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		err := eachOfWorkspace(ctx, q, turnsTable, ws, lastTurnSQL(q.dialect, len(chunk), extra), lastTurnArgs(q.dialect, chunk, ws),
			func(t *forkengine.Turn) { out[t.SessionID] = *t })
		return classify(err, "turn per session")
	})
	return out, err
}

// TurnsThrough returns the session's turns with Sequence <= maxSequence in sequence order.
func (q queries) TurnsThrough(ctx context.Context, ws, sessionID string, maxSequence int64) ([]forkengine.Turn, error) {
	all, err := q.TurnsBySessionIDs(ctx, ws, []string{sessionID}, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("turns of session %s through %d: %w", sessionID, maxSequence, err)
	}
	out := []forkengine.Turn{}
	for _, t := range all[sessionID] {
		if t.Sequence <= maxSequence {
			out = append(out, t)
		}
	}
	return out, nil
}

// MessagesByTurnIDs returns each turn's messages in Position order.
func (q queries) MessagesByTurnIDs(ctx context.Context, ws string, turnIDs []string) (map[string][]forkengine.Message, error) {
	return q.messagesOfTurns(ctx, ws, turnIDs, qualifiedMessagesOfWorkspace, func(m *forkengine.Message) []any {
		return messagesTable.targets(m)[1:] // listAfterWorkspace: every column but workspace_id
	}, false)
}

// TypedMessagesByTurnIDs is MessagesByTurnIDs restricted to the messages with typed parts
// (forkengine.TypedMessagesReader): what a fork's prepare checks, read by the partial index
// messages_typed_by_turn, so a plain message costs it nothing.
func (q queries) TypedMessagesByTurnIDs(ctx context.Context, ws string, turnIDs []string) (map[string][]forkengine.Message, error) {
	return q.messagesOfTurns(ctx, ws, turnIDs, qualifiedMessagesOfWorkspace, func(m *forkengine.Message) []any {
		return messagesTable.targets(m)[1:]
	}, true)
}

// messageTextColumns are what MessageTextsByTurnIDs reads of a message: its turn and its text.
const messageTextColumns = "m.turn_id, m.role, m.content"

// MessageTextsByTurnIDs is TurnMessagesAfter from the first message, for a response that shows
// only each message's role and content: up to limit messages per turn, of each only its turn,
// role and content (ID, SessionID, Position and CreatedAt are left zero). The driver copies out
// and boxes every column it returns, so a transcript read without the four columns nobody shows
// costs less. A batch of stored turns only (the list query's latest turns) is read as the whole
// lists MessagesByTurnIDs reads, under a LIMIT of limit rows a turn (a turn longer than limit is
// cut to it, having cost the rows the others did not use); when the batch reaches that LIMIT,
// the turns it did not read whole are read with TurnMessagesAfter's page cut, which costs the
// usual short turns a subquery each (a page of 100 latest turns: 140 µs whole, 250 µs cut).
func (q queries) MessageTextsByTurnIDs(ctx context.Context, ws string, turnIDs []string, limit int) (map[string][]forkengine.Message, error) {
	limit = max(limit, 1)
	targets := func(m *forkengine.Message) []any {
		return []any{&m.TurnID, textScan[forkengine.MessageRole]{&m.Role}, &m.Content}
	}
	out := make(map[string][]forkengine.Message, len(turnIDs))
	err := q.inChunks(turnIDs, func(chunk []string) error {
		if stored, runs := presentedRuns(chunk); len(runs) == 0 {
			in, args := q.inList(stored, ws)
			rows := len(chunk) * limit
			m := forkengine.Message{WorkspaceID: ws}
			all := make([]forkengine.Message, 0, 2*len(chunk))
			err := scanEach(ctx, q, messagesOfTurnsSQL(q.dialect, in, 0, messageTextColumns, false)+" LIMIT ?", append(args, rows), targets(&m),
				func() { all = append(all, m) })
			if err != nil {
				return classify(err, "message texts of %d turns", len(chunk))
			}
			groupMessages(all, out)
			for _, id := range stored {
				if len(out[id]) > limit {
					out[id] = out[id][:limit]
				}
			}
			if len(all) < rows {
				return nil
			}
			// The limit cut the rows, which come turn by turn: the turns before the last one read
			// are whole, the last one is if it reached limit (its first limit are its page), and
			// the others were not reached.
			if last := all[len(all)-1].TurnID; len(out[last]) < limit {
				delete(out, last)
			}
			var rest []string
			for _, id := range chunk {
				if _, ok := out[id]; !ok {
					rest = append(rest, id)
				}
			}
			chunk = rest
		}
		pages, err := q.turnMessagePages(ctx, ws, chunk, messageTextColumns, targets, 0, limit, false)
		for id, msgs := range pages {
			out[id] = msgs
		}
		return err
	})
	return out, err
}

// MessagesByIDs returns the existing messages among ids, keyed by id.
func (q queries) MessagesByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.Message, error) {
	out := make(map[string]forkengine.Message, len(ids))
	err := q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, messagesTable, ws, "SELECT "+messagesTable.listAfterWorkspace("")+
			" FROM messages WHERE workspace_id = ? AND id IN "+in, args,
			func(m *forkengine.Message) { out[m.ID] = *m })
		return classify(err, "messages by ids")
	})
	if err != nil {
		return nil, err
	}
	return out, q.presentedMessages(ctx, ws, ids, out)
}
