package store

import (
	"context"
	"errors"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// InsertOperation inserts a new operation and its snapshot. ErrDuplicate when its id or request
// id is taken in the workspace, another active operation holds its boundary, or a non-failed
// operation holds its target id.
func (tx *txn) InsertOperation(ctx context.Context, op forkengine.ForkOperation) error {
	snap, err := encodeSnapshotFor(tx.dialect, op)
	if err != nil {
		return err
	}
	err = tx.guarded(ctx, func(db *gorm.DB) error {
		if _, err := tx.execFixed(db, insertOperationSQL, append(operationsTable.values(&op), classValues(op.Status)...)...); err != nil {
			return classify(err, "insert operation %s", op.ID)
		}
		if _, err := tx.execFixed(db, insertSnapshotSQL, snapshotsTable.values(&snapshotRow{workspaceID: op.WorkspaceID, operationID: op.ID, value: snap.value})...); err != nil {
			return classify(err, "insert snapshot of operation %s", op.ID)
		}
		return tx.addFamilyForks(ctx, op.WorkspaceID, op.SourceSessionID, counted(op.Status))
	})
	if err == nil {
		// The stored text itself, decoded on first read, so a cached read returns exactly what a
		// read of the table would.
		tx.remember(cachedSnapshot{key: snapshotKey{op.WorkspaceID, op.ID}, hash: op.SnapshotHash, text: snap.text})
	}
	return err
}

var (
	updateSnapshotSQL = "UPDATE fork_operation_snapshots SET snapshot = ? WHERE workspace_id = ? AND operation_id = ?"
	// reinsertSnapshotSQL (SQLite) deletes the row holding the key and inserts a new one, at the
	// end of the table; without an operation to reference, the insert breaks the foreign key.
	reinsertSnapshotSQL = snapshotsTable.replaceOneSQL()
)

// ReplaceSnapshot stores op.Snapshot as the operation's snapshot; its hash stays the stored one.
// ErrNotFound when the operation does not exist.
//
// On SQLite the row is replaced (deleted and inserted again) rather than updated: an UPDATE that
// shrinks a row leaves it where it was, on a leaf page that held the large row's local part (up
// to 4 KB), while later rows are appended elsewhere, so every commit left ~1.5 KB of dead leaf
// space. The new row goes at the end and the old one's pages are freed for reuse.
func (tx *txn) ReplaceSnapshot(ctx context.Context, op forkengine.ForkOperation) error {
	snap, err := encodeSnapshotFor(tx.dialect, op)
	if err != nil {
		return err
	}
	db := tx.with(ctx)
	if tx.dialect.name == DriverSQLite {
		if _, err := tx.execFixed(db, reinsertSnapshotSQL, snapshotsTable.values(&snapshotRow{workspaceID: op.WorkspaceID, operationID: op.ID, value: snap.value})...); err != nil {
			return classify(err, "replace snapshot of operation %s", op.ID)
		}
	} else {
		res, err := tx.execFixed(db, updateSnapshotSQL, snap.value, op.WorkspaceID, op.ID)
		if err != nil {
			return classify(err, "replace snapshot of operation %s", op.ID)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, notFound("fork operation", op.WorkspaceID, op.ID))
		}
	}
	// The hash is the stored one, which the row read next carries: the cache must answer it
	// with the new text. (Another process's cache may still hold the frozen transcript: a
	// superset that no reader of a committed operation looks at.)
	tx.remember(cachedSnapshot{key: snapshotKey{op.WorkspaceID, op.ID}, hash: op.SnapshotHash, text: snap.text})
	return nil
}

// keyOperationColumns are the indexed columns a status change never alters. An UPDATE that names
// a column rewrites every index on it even when the value stays the same, so the usual update
// leaves them out and instead requires them unchanged (updateStateSQL).
// lease_owner is among them: a status change is a compare and swap on the lease owner too, so an
// instance whose lease was taken over cannot move the operation any more.
var keyOperationColumns = []string{"request_id", "source_session_id", "target_session_id", "through_turn_id", "created_at_us", "lease_owner"}

var (
	insertOperationSQL = insertSQL(operationsTable.name, append(slices.Clone(operationsTable.names), classColumns...), 1)
	insertLineageSQL   = insertSQL("lineages", lineagesTable.names, 1)
	insertSnapshotSQL  = snapshotsTable.insertOneSQL()
	updateOperationSQL = "UPDATE fork_operations SET " + strings.Join(append(slices.Clone(mutableOperations.names), classColumns...), " = ?, ") +
		" = ? WHERE workspace_id = ? AND id = ? AND status = ? AND lease_owner = ?"
	// updateStateSQL[i] also sets classColumns[i] when bit i is set (classChanges).
	updateStateSQL = [4]string{updateStateWith(0), updateStateWith(1), updateStateWith(2), updateStateWith(3)}
)

// stateOperations are mutableOperations without keyOperationColumns; keyOperations are those,
// in the order of updateStateSQL's WHERE.
var (
	stateOperations = mutableOperations.without(keyOperationColumns...)
	keyOperations   = operationsTable.only(keyOperationColumns...)
)

// updateStateWith is the state compare-and-swap setting stateOperations and the classColumns
// that changes selects.
func updateStateWith(changes int) string {
	set := slices.Clone(stateOperations.names)
	for i, c := range classColumns {
		if changes&(1<<i) != 0 {
			set = append(set, c)
		}
	}
	return "UPDATE fork_operations SET " + strings.Join(set, " = ?, ") +
		" = ? WHERE workspace_id = ? AND id = ? AND status = ? AND " + strings.Join(keyOperationColumns, " = ? AND ") + " = ?"
}

// classChanges says which classColumns differ between an operation in status from and one in
// status to (bit i for classColumns[i]), and returns the new values of those.
func classChanges(from, to forkengine.OperationStatus) (int, []any) {
	changes, values := 0, []any(nil)
	old, next := classValues(from), classValues(to)
	for i := range classColumns {
		if old[i] != next[i] {
			changes |= 1 << i
			values = append(values, next[i])
		}
	}
	return changes, values
}

// stateValues are the values of stateOperations, then the changed classes, then the WHERE
// arguments of updateStateSQL.
func stateValues(op *forkengine.ForkOperation, expect string, classes []any) []any {
	out := append(stateOperations.values(op), classes...)
	return keyOperations.appendValues(append(out, op.WorkspaceID, op.ID, expect), op)
}

// UpdateOperation replaces every field of the stored operation but its snapshot and snapshot
// hash (fixed at insert) if its status is expect, and reports whether it did. ErrDuplicate when
// the new values break a unique rule. The engine's updates change state, never the operation's
// identity, and take the cheaper statement; anything else falls back to rewriting every column.
func (tx *txn) UpdateOperation(ctx context.Context, op forkengine.ForkOperation, expect forkengine.OperationStatus) (bool, error) {
	var changed bool
	err := tx.guarded(ctx, func(db *gorm.DB) error {
		changes, classes := classChanges(expect, op.Status)
		var err error
		changed, err = tx.updateRows(db, updateStateSQL[changes], stateValues(&op, string(expect), classes)...)
		if err != nil {
			return classify(err, "update operation %s from %s", op.ID, expect)
		}
		if changed { // same source, so the same family
			return tx.addFamilyForks(ctx, op.WorkspaceID, op.SourceSessionID, counted(op.Status)-counted(expect))
		}
		return tx.rewriteOperation(ctx, db, op, expect, &changed)
	})
	return changed && err == nil, err
}

// rewriteOperation is UpdateOperation's path for a change of identity columns: every column is
// written, and the count moves from the old source's family to the new one's.
func (tx *txn) rewriteOperation(ctx context.Context, db *gorm.DB, op forkengine.ForkOperation,
	expect forkengine.OperationStatus, changed *bool) error {
	var oldSource string
	err := scanEach(ctx, tx.queries, "SELECT source_session_id FROM fork_operations WHERE workspace_id = ? AND id = ? AND status = ? AND lease_owner = ?",
		[]any{op.WorkspaceID, op.ID, string(expect), op.LeaseOwner}, []any{&oldSource}, func() {})
	if err == nil {
		args := append(append(mutableOperations.values(&op), classValues(op.Status)...), op.WorkspaceID, op.ID, string(expect), op.LeaseOwner)
		*changed, err = tx.updateRows(db, updateOperationSQL, args...)
	}
	if err != nil || !*changed {
		return classify(err, "update operation %s from %s", op.ID, expect)
	}
	if err := tx.addFamilyForks(ctx, op.WorkspaceID, oldSource, -counted(expect)); err != nil {
		return err
	}
	return tx.addFamilyForks(ctx, op.WorkspaceID, op.SourceSessionID, counted(op.Status))
}

// updateRows runs an UPDATE and reports whether it changed a row.
func (tx *txn) updateRows(db *gorm.DB, query string, args ...any) (bool, error) {
	res, err := tx.execFixed(db, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// InsertLineage writes one lineage. ErrDuplicate when the target or the operation already has one.
func (tx *txn) InsertLineage(ctx context.Context, l forkengine.Lineage) error {
	return tx.guarded(ctx, func(db *gorm.DB) error {
		if _, err := tx.execFixed(db, insertLineageSQL, lineagesTable.values(&l)...); err != nil {
			return classify(err, "insert lineage of %s", l.TargetSessionID)
		}
		return tx.moveFamilyUnder(ctx, l.WorkspaceID, l.SourceSessionID, l.TargetSessionID)
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
	for i, e := range events {
		e.Cursor, e.OccurredAt = first+int64(i), storedTime(e.OccurredAt)
		out[i] = e
	}
	if err := insertRows(tx.execWith(tx.with(ctx)), eventLogTable, out, false); err != nil {
		return nil, classify(err, "append %d events", len(out))
	}
	return out, nil
}
