package store

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// interactionsTable keeps the permission and question prompts of turns (migration 25). A fork's
// child holds copies of its prefix's interactions under the ids it presents its turns with, so
// turn_id names a presented turn there, not a row of turns: no foreign key.
var interactionsTable = newTable("interactions", []string{"workspace_id", "id"},
	textColumn("workspace_id", func(i *forkengine.Interaction) *string { return &i.WorkspaceID }),
	textColumn("id", func(i *forkengine.Interaction) *string { return &i.ID }),
	textColumn("session_id", func(i *forkengine.Interaction) *string { return &i.SessionID }),
	textColumn("turn_id", func(i *forkengine.Interaction) *string { return &i.TurnID }),
	textColumn("request_id", func(i *forkengine.Interaction) *string { return &i.RequestID }),
	textColumn("kind", func(i *forkengine.Interaction) *forkengine.InteractionKind { return &i.Kind }),
	objectColumn("prompt", func(i *forkengine.Interaction) *json.RawMessage { return &i.Prompt }),
	textColumn("state", func(i *forkengine.Interaction) *forkengine.InteractionState { return &i.State }),
	rawJSONColumn("answer", func(i *forkengine.Interaction) *json.RawMessage { return &i.Answer }),
	microsColumn("created_at_us", func(i *forkengine.Interaction) *time.Time { return &i.CreatedAt }),
	microsColumn("updated_at_us", func(i *forkengine.Interaction) *time.Time { return &i.UpdatedAt }),
	optionalMicrosColumn("answered_at_us", func(i *forkengine.Interaction) **time.Time { return &i.AnsweredAt }),
)

// interactionsMigration creates the table: a turn's interactions are read in order by turn, a
// report finds one by its request id (unique per turn), a purge removes a session's.
var interactionsMigration = migration{version: 25, name: "turn interactions and session audit messages", statements: []string{
	`CREATE TABLE interactions (
		workspace_id   TEXT   NOT NULL,
		id             TEXT   NOT NULL,
		session_id     TEXT   NOT NULL,
		turn_id        TEXT   NOT NULL,
		request_id     TEXT   NOT NULL,
		kind           TEXT   NOT NULL,
		prompt         TEXT   NOT NULL,
		state          TEXT   NOT NULL,
		answer         TEXT,
		created_at_us  BIGINT NOT NULL,
		updated_at_us  BIGINT NOT NULL,
		answered_at_us BIGINT,
		PRIMARY KEY (workspace_id, id)
	)`,
	`CREATE UNIQUE INDEX interactions_by_request ON interactions (workspace_id, turn_id, request_id)`,
	`CREATE INDEX interactions_by_turn ON interactions (workspace_id, turn_id, created_at_us, id)`,
	`CREATE INDEX interactions_by_session ON interactions (workspace_id, session_id)`,
	`CREATE TABLE audit_messages (
		workspace_id   TEXT   NOT NULL,
		id             TEXT   NOT NULL,
		session_id     TEXT   NOT NULL,
		after_sequence BIGINT NOT NULL,
		kind           TEXT   NOT NULL,
		content        TEXT   NOT NULL,
		created_at_us  BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, id)
	)`,
	`CREATE INDEX audit_messages_by_session ON audit_messages (workspace_id, session_id, after_sequence, created_at_us, id)`,
}}

var upsertInteractionSQL = interactionsTable.upsertSQL()

// InteractionsByTurnIDs returns each turn's interactions in (CreatedAt, ID) order: one statement
// per chunk of turn ids.
func (q queries) InteractionsByTurnIDs(ctx context.Context, ws string, turnIDs []string) (map[string][]forkengine.Interaction, error) {
	out := map[string][]forkengine.Interaction{}
	err := q.inChunks(turnIDs, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, interactionsTable, ws, "SELECT "+interactionsTable.listAfterWorkspace("")+
			" FROM interactions WHERE workspace_id = ? AND turn_id IN "+in+" ORDER BY turn_id, created_at_us, id", args,
			func(i *forkengine.Interaction) { out[i.TurnID] = append(out[i.TurnID], *i) })
		return classify(err, "interactions of %d turns", len(chunk))
	})
	return out, err
}

// InteractionsByIDs returns the interactions that exist among ids.
func (q queries) InteractionsByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.Interaction, error) {
	out := make(map[string]forkengine.Interaction, len(ids))
	err := q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, interactionsTable, ws, "SELECT "+interactionsTable.listAfterWorkspace("")+
			" FROM interactions WHERE workspace_id = ? AND id IN "+in, args,
			func(i *forkengine.Interaction) { out[i.ID] = *i })
		return classify(err, "interactions by ids")
	})
	return out, err
}

// InteractionByRequest returns the turn's interaction of requestID, or ErrNotFound.
func (q queries) InteractionByRequest(ctx context.Context, ws, turnID, requestID string) (forkengine.Interaction, error) {
	rows, err := queryAll(ctx, q, interactionsTable, "SELECT "+interactionsTable.list("")+
		" FROM interactions WHERE workspace_id = ? AND turn_id = ? AND request_id = ?", ws, turnID, requestID)
	switch {
	case err != nil:
		return forkengine.Interaction{}, classify(err, "interaction %s of turn %s", requestID, turnID)
	case len(rows) == 0:
		return forkengine.Interaction{}, notFound("interaction of turn "+turnID, ws, requestID)
	}
	return rows[0], nil
}

// UpsertInteraction writes i over the row of its id; ErrDuplicate when another id holds its
// (turn, request id).
func (tx *txn) UpsertInteraction(ctx context.Context, i forkengine.Interaction) error {
	return tx.guarded(ctx, func(db *gorm.DB) error {
		_, err := tx.execFixed(db, upsertInteractionSQL, interactionsTable.values(&i)...)
		return classify(err, "upsert interaction %s", i.ID)
	})
}

// InsertInteractions inserts new interactions, one statement per batch.
func (tx *txn) InsertInteractions(ctx context.Context, is []forkengine.Interaction) error {
	if len(is) == 0 {
		return nil
	}
	return tx.guarded(ctx, func(db *gorm.DB) error {
		return classify(insertRows(tx.execWith(db), interactionsTable, is, false), "insert %d interactions", len(is))
	})
}

// auditMessagesTable keeps the sessions' turn-less notices (migration 25 too).
var auditMessagesTable = newTable("audit_messages", []string{"workspace_id", "id"},
	textColumn("workspace_id", func(m *forkengine.AuditMessage) *string { return &m.WorkspaceID }),
	textColumn("id", func(m *forkengine.AuditMessage) *string { return &m.ID }),
	textColumn("session_id", func(m *forkengine.AuditMessage) *string { return &m.SessionID }),
	integerColumn("after_sequence", func(m *forkengine.AuditMessage) *int64 { return &m.AfterSequence }),
	textColumn("kind", func(m *forkengine.AuditMessage) *string { return &m.Kind }),
	textColumn("content", func(m *forkengine.AuditMessage) *string { return &m.Content }),
	microsColumn("created_at_us", func(m *forkengine.AuditMessage) *time.Time { return &m.CreatedAt }),
	integerColumn("position", func(m *forkengine.AuditMessage) *int64 { return &m.Position }),
)

// auditsOfHistoriesSQL reads the audit messages that the Histories of the sessions in (inList)
// present: per History, its segments, and per segment the owner's audit messages it presents,
// by forkengine.InheritsAudit's condition (the index audit_messages_by_session seeks them by
// owner and place). It selects the presenting session, its key and the segment's Via, then the
// message's columns. Arguments: the workspace, the ids (inList).
func auditsOfHistoriesSQL(d dialect, in string) string {
	histories := "(SELECT * FROM histories WHERE workspace_id = ? AND session_id IN " + in + " AND audit_bound >= 0) h"
	return "SELECT h.session_id, h.history_key, g.via, " + auditMessagesTable.list("a.") + " " + seekChain(d, histories,
		joinStep{"history_segments", "g", "g.workspace_id = h.workspace_id AND g.session_id = h.session_id"},
		joinStep{"audit_messages", "a", "a.workspace_id = g.owner_workspace_id AND a.session_id = g.owner_session_id AND " +
			"a.after_sequence >= g.from_sequence AND a.after_sequence < g.to_sequence AND " +
			"a.position >= 0 AND a.position <= g.watermark AND a.position <= h.audit_bound"})
}

// AuditMessagesBySessionIDs returns each session's audit messages in transcript order: its own
// rows, and a fork's child's inherited ones, presented (two statements per chunk of sessions).
func (q queries) AuditMessagesBySessionIDs(ctx context.Context, ws string, sessionIDs []string) (map[string][]forkengine.AuditMessage, error) {
	out := map[string][]forkengine.AuditMessage{}
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, auditMessagesTable, ws, "SELECT "+auditMessagesTable.listAfterWorkspace("")+
			" FROM audit_messages WHERE workspace_id = ? AND session_id IN "+in, args,
			func(m *forkengine.AuditMessage) { out[m.SessionID] = append(out[m.SessionID], *m) })
		if err != nil {
			return classify(err, "audit messages of %d sessions", len(chunk))
		}
		return q.inheritedAudits(ctx, ws, chunk, func(m forkengine.AuditMessage) { out[m.SessionID] = append(out[m.SessionID], m) })
	})
	for _, ms := range out {
		sortAudits(ms)
	}
	return out, err
}

// inheritedAudits calls fn with each audit message the Histories of sessions present.
func (q queries) inheritedAudits(ctx context.Context, ws string, sessions []string, fn func(forkengine.AuditMessage)) error {
	in, args := q.inList(sessions, ws)
	var sid, hkey, via string
	var m forkengine.AuditMessage
	targets := append([]any{&sid, &hkey, &via}, auditMessagesTable.targets(&m)...)
	err := scanEach(ctx, q, auditsOfHistoriesSQL(q.dialect, in), args, targets, func() {
		fn(forkengine.PresentAuditMessage(forkengine.History{WorkspaceID: ws, SessionID: sid, Key: hkey}, decodeVia(via), m))
	})
	return classify(err, "inherited audit messages of %d sessions", len(sessions))
}

// sortAudits puts one session's audit messages in transcript order.
func sortAudits(ms []forkengine.AuditMessage) {
	slices.SortFunc(ms, func(a, b forkengine.AuditMessage) int {
		return cmp.Or(cmp.Compare(a.AfterSequence, b.AfterSequence), cmp.Compare(a.Position, b.Position),
			a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
}

// AuditMessagesByIDs returns the audit messages that exist among ids: stored rows, and the
// presented ids of inherited ones, resolved by reading the audit messages their children
// present (a session has few: one per notice between turns).
func (q queries) AuditMessagesByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.AuditMessage, error) {
	out := make(map[string]forkengine.AuditMessage, len(ids))
	err := q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, auditMessagesTable, ws, "SELECT "+auditMessagesTable.listAfterWorkspace("")+
			" FROM audit_messages WHERE workspace_id = ? AND id IN "+in, args,
			func(m *forkengine.AuditMessage) { out[m.ID] = *m })
		return classify(err, "audit messages by ids")
	})
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	var keys []string
	for _, id := range ids {
		if _, found := out[id]; found {
			continue
		}
		if key, ok := forkengine.PresentedAuditKey(id); ok {
			want[id] = true
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return out, nil
	}
	sessions, err := q.sessionsOfHistoryKeys(ctx, ws, keys)
	if err != nil || len(sessions) == 0 {
		return out, err
	}
	err = q.inheritedAudits(ctx, ws, sessions, func(m forkengine.AuditMessage) {
		if want[m.ID] {
			out[m.ID] = m
		}
	})
	return out, err
}

// sessionsOfHistoryKeys returns the sessions whose Histories have the keys.
func (q queries) sessionsOfHistoryKeys(ctx context.Context, ws string, keys []string) ([]string, error) {
	var out []string
	err := q.inChunks(slices.Compact(slices.Sorted(slices.Values(keys))), func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		var sid string
		err := scanEach(ctx, q, "SELECT session_id FROM histories WHERE workspace_id = ? AND history_key IN "+in, args,
			[]any{&sid}, func() { out = append(out, sid) })
		return classify(err, "histories by key")
	})
	return out, err
}

// AppendAuditMessages inserts new audit messages, one statement per batch, each with the next
// position of its workspace's history clock, and returns them as stored.
func (tx *txn) AppendAuditMessages(ctx context.Context, ms []forkengine.AuditMessage) ([]forkengine.AuditMessage, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := append([]forkengine.AuditMessage(nil), ms...)
	groups := map[string][]int{}
	for i, m := range out {
		groups[m.WorkspaceID] = append(groups[m.WorkspaceID], i)
		out[i].CreatedAt = storedTime(m.CreatedAt)
	}
	for ws, idx := range groups {
		first, err := tx.reserve(ctx, ws, "message_position", int64(len(idx)))
		if err != nil {
			return nil, err
		}
		for i, j := range idx {
			out[j].Position = first + int64(i)
		}
	}
	err := tx.guarded(ctx, func(db *gorm.DB) error {
		return classify(insertRows(tx.execWith(db), auditMessagesTable, out, false), "insert %d audit messages", len(out))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
