package store

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// interactionsTable keeps the permission and question prompts of turns (migration 23). A fork's
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
var interactionsMigration = migration{version: 23, name: "turn interactions", statements: []string{
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
