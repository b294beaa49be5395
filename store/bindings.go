package store

import (
	"context"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// turnsByProviderTurnIndex finds a session's turns by provider turn id (migration 17): every
// report that names a new provider turn id, and every recovered binding, asks whether another
// turn of the session is bound to it. The provider turn id comes before the session on purpose:
// led by (workspace_id, session_id) the index looked to PostgreSQL's planner like a cheaper
// turns_sequence_per_session for every read of a session's turns, and it took it and sorted.
const turnsByProviderTurnIndex = `CREATE INDEX turns_by_provider_turn ON turns (workspace_id, provider_turn_id, session_id)`

var providerTurnOwnerSQL = "SELECT " + turnSelectList + ` FROM turns
	WHERE workspace_id = ? AND provider_turn_id = ? AND session_id = ? AND id <> ? AND provider_turn_id <> id
	LIMIT 1`

// ProviderTurnOwner returns a turn of the session other than exceptTurnID that is bound to
// providerTurnID, or ErrNotFound. It has no ORDER BY: ordered by sequence, SQLite walked the
// session's turns in order through turns_sequence_per_session instead of seeking the one row.
func (q queries) ProviderTurnOwner(ctx context.Context, ws, sessionID, providerTurnID, exceptTurnID string) (forkengine.Turn, error) {
	rows, err := queryAll(ctx, q, turnsTable, providerTurnOwnerSQL, ws, providerTurnID, sessionID, exceptTurnID)
	if err != nil {
		return forkengine.Turn{}, classify(err, "owner of provider turn %s", providerTurnID)
	}
	if len(rows) == 0 {
		return forkengine.Turn{}, notFound("owner of provider turn", ws, providerTurnID)
	}
	return rows[0], nil
}

// The compare and swap of BindTurn: one statement for a stored binding and one for an absent
// one, since "binding = NULL" is never true and "? IS NULL" leaves PostgreSQL without a type for
// the parameter.
const (
	bindTurnSQL = `UPDATE turns SET provider_turn_id = ?, provider_turn_binding = ?, updated_at_us = ?
		WHERE workspace_id = ? AND id = ? AND session_id = ? AND phase = 'settled' AND provider_turn_id = ?`
	bindTurnFromBindingSQL = bindTurnSQL + ` AND provider_turn_binding = ?`
	bindTurnFromNoneSQL    = bindTurnSQL + ` AND provider_turn_binding IS NULL`
)

// BindTurn writes next's provider turn id, binding and update time over a settled turn of its
// session that still has expect's provider turn id and binding, and reports whether it did.
func (tx *txn) BindTurn(ctx context.Context, next, expect forkengine.Turn) (bool, error) {
	args := []any{next.ProviderTurnID, rawPtr(next.ProviderTurnBinding), micros(next.UpdatedAt),
		next.WorkspaceID, next.ID, next.SessionID, expect.ProviderTurnID}
	query := bindTurnFromNoneSQL
	if from := rawPtr(expect.ProviderTurnBinding); from != nil {
		query, args = bindTurnFromBindingSQL, append(args, *from)
	}
	var changed bool
	err := tx.guarded(ctx, func(db *gorm.DB) error {
		res, err := tx.execFixed(db, query, args...)
		if err != nil {
			return classify(err, "bind turn %s", next.ID)
		}
		n, err := res.RowsAffected()
		changed = n == 1
		return err
	})
	return changed, err
}
