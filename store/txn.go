package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// txn is the forkengine.Tx of one Update: reads and writes on the same transaction.
type txn struct {
	queries
	// bulk, set by BulkLoad, collects the sessions to index at the end instead of indexing as
	// sessions and messages are written (bulk_load.go).
	bulk *bulkIndex
}

// insertBatch bounds rows per INSERT; with the widest row (8 columns) it stays under SQLite's
// parameter limit, and a fork's copied transcript is normally one statement.
const insertBatch = 500

// guarded runs a statement that may violate a constraint. On PostgreSQL a failed statement
// aborts the whole transaction, so it runs under a savepoint and the transaction stays usable
// after ErrDuplicate, as it does on SQLite.
func (tx *txn) guarded(ctx context.Context, fn func(db *gorm.DB) error) error {
	db := tx.with(ctx)
	// A bulk load fails whole on an error, so it needs no savepoint (and a PostgreSQL transaction
	// of 100,000 savepoints slowed every insert to seconds: its subtransactions overflow).
	if !tx.dialect.abortsOnError || tx.bulk != nil {
		return fn(db)
	}
	const sp = "forkgraph_guard"
	if err := db.SavePoint(sp).Error; err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := fn(db); err != nil {
		if rbErr := db.RollbackTo(sp).Error; rbErr != nil {
			return fmt.Errorf("%w (and rollback to savepoint: %v)", err, rbErr)
		}
		return err
	}
	return db.Exec("RELEASE SAVEPOINT " + sp).Error
}

// execWith adapts a gorm handle to insertRows.
func (tx *txn) execWith(db *gorm.DB) func(sql string, args ...any) error {
	return func(sql string, args ...any) error {
		_, err := tx.execFixed(db, sql, args...)
		return err
	}
}

// UpsertSession inserts s or replaces every field of the stored row.
// The search index follows its title (search.go).
func (tx *txn) UpsertSession(ctx context.Context, s forkengine.Session) error {
	if tx.bulk != nil {
		tx.bulk.touch(s.WorkspaceID, s.ID)
		if _, err := tx.execFixed(tx.with(ctx), upsertSessionSQL, sessionsTable.values(&s)...); err != nil {
			return classify(err, "upsert session %s", s.ID)
		}
		return tx.bulkWrote(ctx, 1)
	}
	prior, err := tx.titleBefore(ctx, s.WorkspaceID, s.ID)
	if err != nil {
		return err
	}
	return tx.guarded(ctx, func(db *gorm.DB) error {
		if _, err := tx.execFixed(db, upsertSessionSQL, sessionsTable.values(&s)...); err != nil {
			return classify(err, "upsert session %s", s.ID)
		}
		return tx.indexTitle(db, prior, s)
	})
}

// UpsertTurn inserts t or replaces every field of the stored row of its session. ErrNotFound when
// its session does not exist; ErrDuplicate when another turn of the session has its sequence, or
// when the id is a turn of another session (the row is left as it is).
func (tx *txn) UpsertTurn(ctx context.Context, t forkengine.Turn) error {
	return tx.guarded(ctx, func(db *gorm.DB) error {
		res, err := tx.execFixed(db, upsertTurnSQL, turnsTable.values(&t)...)
		if err != nil {
			return classify(err, "upsert turn %s", t.ID)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("upsert turn %s: rows affected: %w", t.ID, err)
		}
		if n == 0 {
			return fmt.Errorf("upsert turn %s: it is a turn of another session than %s: %w", t.ID, t.SessionID, forkengine.ErrDuplicate)
		}
		return nil
	})
}

// InsertTurns inserts new turns, one statement per batch of insertBatch. ErrDuplicate when an id
// or a (session, sequence) is taken, ErrNotFound when a turn's session does not exist. Under the
// caller's transaction a failed batch leaves nothing that the transaction will commit.
func (tx *txn) InsertTurns(ctx context.Context, turns []forkengine.Turn) error {
	if len(turns) == 0 {
		return nil
	}
	err := tx.guarded(ctx, func(db *gorm.DB) error {
		return classify(insertRows(tx.execWith(db), turnsTable, turns, !tx.dialect.numbered), "insert %d turns", len(turns))
	})
	if err == nil && tx.bulk != nil {
		err = tx.bulkWrote(ctx, len(turns))
	}
	return err
}

// InsertMessages inserts msgs with positions assigned in slice order and returns them.
// ErrDuplicate on an existing id, ErrNotFound when a message's turn does not exist.
func (tx *txn) InsertMessages(ctx context.Context, msgs []forkengine.Message) ([]forkengine.Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := append([]forkengine.Message(nil), msgs...)
	for ws, idx := range groupByWorkspace(out) {
		first, err := tx.reserve(ctx, ws, "message_position", int64(len(idx)))
		if err != nil {
			return nil, err
		}
		for i, j := range idx {
			out[j].Position = first + int64(i)
		}
	}
	for i := range out {
		out[i].CreatedAt = storedTime(out[i].CreatedAt)
	}
	for ws, idx := range groupByWorkspace(out) {
		turnIDs := make([]string, len(idx))
		for i, j := range idx {
			turnIDs[i] = out[j].TurnID
		}
		if err := tx.adoptInheritedTurns(ctx, ws, turnIDs); err != nil {
			return nil, err
		}
	}
	err := tx.guarded(ctx, func(db *gorm.DB) error {
		if err := insertRows(tx.execWith(db), messagesTable, out, !tx.dialect.numbered); err != nil {
			return classify(err, "insert %d messages", len(out))
		}
		if tx.bulk != nil {
			for _, m := range out {
				tx.bulk.touch(m.WorkspaceID, m.SessionID)
			}
			return tx.bulkWrote(ctx, len(out))
		}
		return tx.indexMessages(db, out) // their words join their sessions' documents (search.go)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func groupByWorkspace(msgs []forkengine.Message) map[string][]int {
	groups := map[string][]int{}
	for i, m := range msgs {
		groups[m.WorkspaceID] = append(groups[m.WorkspaceID], i)
	}
	return groups
}

var reserveSQL = countersTable.insertOneSQL() + countersTable.onConflictAdd("value") + " RETURNING value"

// reserve advances a counter by n and returns the first of the n values reserved. The counter
// row is written, so it stays locked until commit: values are handed out in commit order.
func (tx *txn) reserve(ctx context.Context, scope, name string, n int64) (int64, error) {
	last, err := tx.queryInt(ctx, reserveSQL, countersTable.values(&counterRow{scope, name, n})...)
	if err != nil {
		return 0, classify(err, "reserve %d %s values", n, name)
	}
	return last - n + 1, nil
}

const softDeleteSQL = "UPDATE sessions SET deleted_at_us = ? WHERE workspace_id = ? AND id = ?"

// SoftDeleteSession stamps DeletedAt. ErrNotFound when the session does not exist.
func (tx *txn) SoftDeleteSession(ctx context.Context, ws, id string, at time.Time) error {
	changed, err := tx.updateRows(tx.with(ctx), softDeleteSQL, micros(at), ws, id)
	if err != nil {
		return classify(err, "soft-delete session %s", id)
	}
	if !changed {
		return notFound("session", ws, id)
	}
	return nil
}

// PurgeSession removes the session, its turns, messages, interactions and audit messages, and every operation and lineage
// where it is source or target. A missing session still has its operations and lineages removed.
func (tx *txn) PurgeSession(ctx context.Context, ws, id string) error {
	steps := []struct{ what, sql string }{
		{"messages", `DELETE FROM messages WHERE workspace_id = @ws
			AND turn_id IN (SELECT t.id FROM turns t WHERE t.workspace_id = @ws AND t.session_id = @id)`},
		{"message counts", purgeMessageCountsSQL},
		{"turns", `DELETE FROM turns WHERE workspace_id = @ws AND session_id = @id`},
		{"turn count", purgeTurnCountSQL},
		{"session", `DELETE FROM sessions WHERE workspace_id = @ws AND id = @id`},
		{"operations", `DELETE FROM fork_operations WHERE workspace_id = @ws AND (source_session_id = @id OR target_session_id = @id)`},
		{"lineages", `DELETE FROM lineages WHERE workspace_id = @ws AND (source_session_id = @id OR target_session_id = @id)`},
	}
	args := map[string]any{"ws": ws, "id": id}
	if err := tx.lockForkedSessions(ctx, args); err != nil {
		return err
	}
	// Submissions go first: purgeHistory may move the session's turns to a tombstone workspace,
	// and a submission's foreign key would hold them where they are. No reader of a history
	// needs them (recovery repairs a session's own turns).
	if err := tx.with(ctx).Exec(`DELETE FROM interactions WHERE workspace_id = @ws AND session_id = @id`, args).Error; err != nil {
		return classify(err, "purge interactions of session %s", id)
	}
	if err := tx.with(ctx).Exec(`DELETE FROM turn_submissions WHERE workspace_id = @ws AND session_id = @id`, args).Error; err != nil {
		return classify(err, "purge submissions of session %s", id)
	}
	if err := tx.purgeHistory(ctx, ws, id); err != nil {
		return err
	}
	// After purgeHistory: the audit messages another History presents have moved with the rows.
	if err := tx.with(ctx).Exec(`DELETE FROM audit_messages WHERE workspace_id = @ws AND session_id = @id`, args).Error; err != nil {
		return classify(err, "purge audit messages of session %s", id)
	}
	// Read before the rows that lead to them go.
	families, err := tx.familiesTouchedByPurge(ctx, ws, id)
	if err != nil {
		return err
	}
	for _, step := range steps {
		if err := tx.with(ctx).Exec(step.sql, args).Error; err != nil {
			return classify(err, "purge %s of session %s", step.what, id)
		}
	}
	return tx.recountFamilies(ctx, ws, families)
}

// lockForkedSessionsSQL locks the sessions forked from @id, in id order, without blocking
// inserts that only reference them (NO KEY: a turn reported into one still goes ahead).
const lockForkedSessionsSQL = `SELECT s.id FROM sessions s WHERE s.workspace_id = @ws
	AND s.id IN (SELECT l.target_session_id FROM lineages l WHERE l.workspace_id = @ws AND l.source_session_id = @id)
	ORDER BY s.id FOR NO KEY UPDATE`

// lockForkedSessions row-locks every session a purge of @id makes a root again. Deleting a
// lineage moves its target between session count classes by the target's deleted and visible
// bits as the trigger reads them; under READ COMMITTED that is the last committed row, so a
// soft delete, re-report or purge of the target running beside the purge (each holding only its
// own session's lock) moved the target by other bits than the trigger did, and session_counts
// drifted for good. With the rows locked first, such a writer either commits before the purge
// reads its target (the trigger's statement then sees its row) or waits for the purge to commit
// (its own trigger then sees the lineage gone). Locking before anything else is deleted keeps
// the order every purge takes locks in: forked sessions first, then its own rows. SQLite has one
// writer and needs none of this.
func (tx *txn) lockForkedSessions(ctx context.Context, args map[string]any) error {
	if !tx.dialect.skipLocked {
		return nil
	}
	var ids []string
	if err := tx.with(ctx).Raw(lockForkedSessionsSQL, args).Scan(&ids).Error; err != nil {
		return classify(err, "lock the sessions forked from %s", args["id"])
	}
	return nil
}
