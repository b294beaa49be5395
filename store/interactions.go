package store

import (
	"context"
	"encoding/json"
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
)

// AuditMessagesBySessionIDs returns each session's audit messages in transcript order.
func (q queries) AuditMessagesBySessionIDs(ctx context.Context, ws string, sessionIDs []string) (map[string][]forkengine.AuditMessage, error) {
	out := map[string][]forkengine.AuditMessage{}
	err := q.inChunks(sessionIDs, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, auditMessagesTable, ws, "SELECT "+auditMessagesTable.listAfterWorkspace("")+
			" FROM audit_messages WHERE workspace_id = ? AND session_id IN "+in+
			" ORDER BY session_id, after_sequence, created_at_us, id", args,
			func(m *forkengine.AuditMessage) { out[m.SessionID] = append(out[m.SessionID], *m) })
		return classify(err, "audit messages of %d sessions", len(chunk))
	})
	return out, err
}

// AuditMessagesByIDs returns the audit messages that exist among ids.
func (q queries) AuditMessagesByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.AuditMessage, error) {
	out := make(map[string]forkengine.AuditMessage, len(ids))
	err := q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		err := eachOfWorkspace(ctx, q, auditMessagesTable, ws, "SELECT "+auditMessagesTable.listAfterWorkspace("")+
			" FROM audit_messages WHERE workspace_id = ? AND id IN "+in, args,
			func(m *forkengine.AuditMessage) { out[m.ID] = *m })
		return classify(err, "audit messages by ids")
	})
	return out, err
}

// InsertAuditMessages inserts new audit messages, one statement per batch.
func (tx *txn) InsertAuditMessages(ctx context.Context, ms []forkengine.AuditMessage) error {
	if len(ms) == 0 {
		return nil
	}
	return tx.guarded(ctx, func(db *gorm.DB) error {
		return classify(insertRows(tx.execWith(db), auditMessagesTable, ms, false), "insert %d audit messages", len(ms))
	})
}
