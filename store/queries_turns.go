package store

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

var (
	getTurnSQL      = "SELECT " + turnSelectList + " FROM turns WHERE workspace_id = ? AND id = ?"
	turnsThroughSQL = "SELECT " + turnSelectList +
		" FROM turns WHERE workspace_id = ? AND session_id = ? AND sequence <= ? ORDER BY sequence"
)

// GetTurn returns one turn, or ErrNotFound.
func (q queries) GetTurn(ctx context.Context, ws, id string) (forkengine.Turn, error) {
	rows, err := queryAll(ctx, q, turnsTable, getTurnSQL, ws, id)
	if err != nil {
		return forkengine.Turn{}, classify(err, "get turn %s", id)
	}
	if len(rows) == 0 {
		return forkengine.Turn{}, notFound("turn", ws, id)
	}
	return rows[0], nil
}

// TurnsByIDs returns the existing turns among ids, keyed by id.
func (q queries) TurnsByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.Turn, error) {
	out := make(map[string]forkengine.Turn, len(ids))
	err := q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, turnsTable, ws, "SELECT "+turnColumnsOfWorkspace+" FROM turns WHERE workspace_id = ? AND id IN "+in, args,
			func(t *forkengine.Turn) { out[t.ID] = *t })
		return classify(err, "turns by ids")
	})
	return out, err
}

// TurnsBySessionIDs returns, per session, up to limit (<= 0: all) turns with Sequence >
// afterSequence in sequence order. Sessions without such turns are absent.
func (q queries) TurnsBySessionIDs(ctx context.Context, ws string, sessionIDs []string, afterSequence int64, n int) (map[string][]forkengine.Turn, error) {
	out := map[string][]forkengine.Turn{}
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		var query string
		var args []any
		if n > 0 {
			query, args = pagedTurnsSQL(q.dialect, len(chunk)), pagedTurnsArgs(q.dialect, chunk, ws, afterSequence, n)
		} else {
			var in string
			in, args = q.inList(chunk, ws)
			query = "SELECT " + turnSelectList + " FROM turns WHERE workspace_id = ? AND session_id IN " + in +
				" AND sequence > ? ORDER BY session_id, sequence"
			args = append(args, afterSequence)
		}
		err := eachOf(ctx, q, turnsTable, query, args, func(t *forkengine.Turn) { out[t.SessionID] = append(out[t.SessionID], *t) })
		return classify(err, "turns by sessions")
	})
	return out, err
}

// LatestTurnsBySessionIDs returns each session's highest-sequence turn.
func (q queries) LatestTurnsBySessionIDs(ctx context.Context, ws string, sessionIDs []string) (map[string]forkengine.Turn, error) {
	return q.turnPerSession(ctx, noExtra, ws, sessionIDs)
}

// ActiveTurnsBySessionIDs returns each session's highest-sequence turn that is not settled.
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
	rows, err := queryAll(ctx, q, turnsTable, turnsThroughSQL, ws, sessionID, maxSequence)
	if err != nil {
		return nil, classify(err, "turns of session %s through %d", sessionID, maxSequence)
	}
	if rows == nil {
		rows = []forkengine.Turn{}
	}
	return rows, nil
}

// MessagesByTurnIDs returns each turn's messages in Position order.
func (q queries) MessagesByTurnIDs(ctx context.Context, ws string, turnIDs []string) (map[string][]forkengine.Message, error) {
	return q.messagesByTurns(ctx, ws, turnIDs, qualifiedMessagesOfWorkspace, func(m *forkengine.Message) []any {
		return messagesTable.targets(m)[1:] // listAfterWorkspace: every column but workspace_id
	})
}

// messageTextColumns are what MessageTextsByTurnIDs reads of a message: its turn and its text.
const messageTextColumns = "m.turn_id, m.role, m.content"

// MessageTextsByTurnIDs is MessagesByTurnIDs for a response that shows only each message's role
// and content: it reads only the turn, role and content of each message (ID, SessionID,
// Position and CreatedAt are left zero). The driver copies out and boxes every column it
// returns, so a transcript read without the four columns nobody shows costs less; the
// statement, its index seek and its order are MessagesByTurnIDs'.
func (q queries) MessageTextsByTurnIDs(ctx context.Context, ws string, turnIDs []string) (map[string][]forkengine.Message, error) {
	return q.messagesByTurns(ctx, ws, turnIDs, messageTextColumns, func(m *forkengine.Message) []any {
		return []any{&m.TurnID, textScan[forkengine.MessageRole]{&m.Role}, &m.Content}
	})
}

// messagesByTurns reads the messages of turnIDs, selecting columns (of workspace ws, aliased m)
// into the targets of one message, and groups them by turn in Position order: one seek of
// messages_by_turn per id.
func (q queries) messagesByTurns(ctx context.Context, ws string, turnIDs []string, columns string,
	targets func(*forkengine.Message) []any,
) (map[string][]forkengine.Message, error) {
	out := make(map[string][]forkengine.Message, len(turnIDs))
	err := q.inChunks(turnIDs, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		query := "SELECT " + columns + " FROM messages m WHERE m.workspace_id = ? AND m.turn_id IN " + in +
			" ORDER BY m.turn_id, m.position"
		// In turn order, each turn's messages one run of it; sized for a question and an answer each.
		all := make([]forkengine.Message, 0, 2*len(chunk))
		m := forkengine.Message{WorkspaceID: ws}
		err := scanEach(ctx, q, query, args, targets(&m), func() { all = append(all, m) })
		if err != nil {
			return classify(err, "messages by turns")
		}
		for start, i := 0, 1; i <= len(all); i++ {
			if i == len(all) || all[i].TurnID != all[start].TurnID {
				out[all[start].TurnID] = all[start:i:i] // capped: an append by the caller copies
				start = i
			}
		}
		return nil
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
	return out, err
}
