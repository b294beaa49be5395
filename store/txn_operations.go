package store

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// InsertOperation inserts a new operation and its snapshot. ErrDuplicate when its id or request
// id is taken in the workspace, another active operation holds its boundary, or a non-failed
// operation holds its target id.
func (tx *txn) InsertOperation(ctx context.Context, op forkengine.ForkOperation) error {
	row, err := toOperationRow(op)
	if err != nil {
		return err
	}
	text, err := encodeSnapshot(op)
	if err != nil {
		return err
	}
	err = tx.guarded(ctx, func(db *gorm.DB) error {
		if _, err := tx.execFixed(db, insertOperationSQL, row.values()...); err != nil {
			return classify(err, "insert operation %s", op.ID)
		}
		_, err := tx.execFixed(db, insertSnapshotSQL, op.WorkspaceID, op.ID, text)
		return classify(err, "insert snapshot of operation %s", op.ID)
	})
	if err == nil {
		// The stored text itself, decoded on first read, so a cached read returns exactly what a
		// read of the table would.
		tx.remember(cachedSnapshot{key: snapshotKey{op.WorkspaceID, op.ID}, hash: op.SnapshotHash, text: text})
	}
	return err
}

var (
	insertOperationSQL = insertSQL("fork_operations", operationColumns, 1)
	insertSnapshotSQL  = "INSERT INTO fork_operation_snapshots (workspace_id, operation_id, snapshot) VALUES (?, ?, ?)"
	updateOperationSQL = "UPDATE fork_operations SET " + strings.Join(mutableOperationColumns, " = ?, ") +
		" = ? WHERE workspace_id = ? AND id = ? AND status = ?"
)

// UpdateOperation replaces every field of the stored operation but its snapshot and snapshot
// hash (fixed at insert) if its status is expect, and reports whether it did. ErrDuplicate when
// the new values break a unique rule.
func (tx *txn) UpdateOperation(ctx context.Context, op forkengine.ForkOperation, expect forkengine.OperationStatus) (bool, error) {
	row, err := toOperationRow(op)
	if err != nil {
		return false, err
	}
	args := append(row.mutableValues(), op.WorkspaceID, op.ID, string(expect))
	var changed bool
	err = tx.guarded(ctx, func(db *gorm.DB) error {
		res, err := tx.execFixed(db, updateOperationSQL, args...)
		if err != nil {
			return classify(err, "update operation %s from %s", op.ID, expect)
		}
		n, err := res.RowsAffected()
		changed = n > 0
		return classify(err, "update operation %s from %s", op.ID, expect)
	})
	return changed && err == nil, err
}

// InsertLineage writes one lineage. ErrDuplicate when the target or the operation already has one.
func (tx *txn) InsertLineage(ctx context.Context, l forkengine.Lineage) error {
	row := toLineageRow(l)
	return tx.guarded(ctx, func(db *gorm.DB) error {
		return classify(db.Create(&row).Error, "insert lineage of %s", l.TargetSessionID)
	})
}

// AppendEvents appends events to the durable log with cursors assigned in slice order.
func (tx *txn) AppendEvents(ctx context.Context, events []forkengine.Event) ([]forkengine.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	first, err := tx.reserve(ctx, "", "event_cursor", int64(len(events)))
	if err != nil {
		return nil, err
	}
	out := make([]forkengine.Event, len(events))
	rows := make([]eventRow, len(events))
	for i, e := range events {
		e.Cursor = first + int64(i)
		rows[i] = toEventRow(e)
		out[i] = rows[i].domain()
	}
	if err := insertRows(tx.execWith(tx.with(ctx)), "events", eventColumns, rows); err != nil {
		return nil, classify(err, "append %d events", len(rows))
	}
	return out, nil
}
