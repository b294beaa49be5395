package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// findOperations runs one operations query and attaches the snapshots.
func (q queries) findOperations(db *gorm.DB, what string) ([]forkengine.ForkOperation, error) {
	ops, err := q.findOperationsWithoutSnapshots(db, what)
	if err != nil {
		return nil, err
	}
	if err := q.attachSnapshots(db.Statement.Context, ops); err != nil {
		return nil, err
	}
	return ops, nil
}

// findOperationsWithoutSnapshots runs one operations query and leaves every Snapshot zero.
func (q queries) findOperationsWithoutSnapshots(db *gorm.DB, what string) ([]forkengine.ForkOperation, error) {
	var rows []operationRow
	if err := db.Find(&rows).Error; err != nil {
		return nil, classify(err, "%s", what)
	}
	out := make([]forkengine.ForkOperation, len(rows))
	for i, r := range rows {
		op, err := r.domain()
		if err != nil {
			return nil, err
		}
		out[i] = op
	}
	return out, nil
}

// attachSnapshots fills in each operation's snapshot: from the cache when it holds the one with
// the operation's hash, otherwise from the snapshots table, one statement per workspace and chunk.
func (q queries) attachSnapshots(ctx context.Context, ops []forkengine.ForkOperation) error {
	missing := map[string][]string{} // workspace → operation ids
	where := map[snapshotKey]int{}
	for i := range ops {
		op := &ops[i]
		s, ok, err := q.snapshots.get(op.WorkspaceID, op.ID, op.SnapshotHash)
		if err != nil {
			return err
		}
		if ok {
			op.Snapshot = s
			continue
		}
		missing[op.WorkspaceID] = append(missing[op.WorkspaceID], op.ID)
		where[snapshotKey{op.WorkspaceID, op.ID}] = i
	}
	for ws, ids := range missing {
		err := q.inChunks(ids, func(chunk []string) error {
			return q.loadSnapshots(ctx, ws, chunk, func(id string, s forkengine.Snapshot) {
				op := &ops[where[snapshotKey{ws, id}]]
				op.Snapshot = copySnapshot(s)
				q.remember(cachedSnapshot{key: snapshotKey{ws, id}, hash: op.SnapshotHash, decoded: true, snapshot: s})
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// loadSnapshots reads and decodes the stored snapshots of ids; every one must exist.
func (q queries) loadSnapshots(ctx context.Context, ws string, ids []string, found func(id string, s forkengine.Snapshot)) error {
	var rows []struct {
		OperationID string
		Snapshot    string
	}
	err := q.with(ctx).Raw(`SELECT operation_id, snapshot FROM fork_operation_snapshots
		WHERE workspace_id = ? AND operation_id IN ?`, ws, ids).Scan(&rows).Error
	if err != nil {
		return classify(err, "read snapshots of %d operations", len(ids))
	}
	if len(rows) != len(ids) {
		return fmt.Errorf("read snapshots: %d of %d operations have none", len(ids)-len(rows), len(ids))
	}
	for _, r := range rows {
		s, err := decodeSnapshot(r.Snapshot)
		if err != nil {
			return fmt.Errorf("decode snapshot of operation %s: %w", r.OperationID, err)
		}
		found(r.OperationID, s)
	}
	return nil
}

// remember caches a snapshot: at once outside a transaction, after commit inside one.
func (q queries) remember(e cachedSnapshot) {
	if q.pending != nil {
		*q.pending = append(*q.pending, e)
		return
	}
	q.snapshots.put(e)
}

// oneOperation returns the first operation of the query or ErrNotFound.
func (q queries) oneOperation(db *gorm.DB, ws, what, key string) (forkengine.ForkOperation, error) {
	ops, err := q.findOperations(db.Limit(1), what+" "+key)
	if err != nil {
		return forkengine.ForkOperation{}, err
	}
	if len(ops) == 0 {
		return forkengine.ForkOperation{}, notFound(what, ws, key)
	}
	return ops[0], nil
}

// GetOperation returns one operation, or ErrNotFound.
func (q queries) GetOperation(ctx context.Context, ws, id string) (forkengine.ForkOperation, error) {
	ops, err := q.operationsWhere(ctx, "workspace_id = ? AND id = ?", ws, id)
	return firstOperation(ops, classify(err, "operation %s", id), ws, "operation", id)
}

// OperationsByIDs returns the existing operations among ids, keyed by id.
func (q queries) OperationsByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.ForkOperation, error) {
	out := map[string]forkengine.ForkOperation{}
	err := q.inChunks(ids, func(chunk []string) error {
		ops, err := q.findOperations(q.with(ctx).Where("workspace_id = ? AND id IN ?", ws, chunk), "operations by ids")
		for _, op := range ops {
			out[op.ID] = op
		}
		return err
	})
	return out, err
}

// GetOperationByRequestID returns the workspace's operation for a request id, or ErrNotFound.
func (q queries) GetOperationByRequestID(ctx context.Context, ws, requestID string) (forkengine.ForkOperation, error) {
	ops, err := q.operationsWhere(ctx, "workspace_id = ? AND request_id = ?", ws, requestID)
	return firstOperation(ops, classify(err, "operation with request id %s", requestID), ws, "operation with request id", requestID)
}

// LatestOperationOnBoundary returns the newest (CreatedAt, ID) operation forking sourceID through
// turnID, or ErrNotFound.
func (q queries) LatestOperationOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.ForkOperation, error) {
	db := q.with(ctx).Where("workspace_id = ? AND source_session_id = ? AND through_turn_id = ?", ws, sourceID, turnID).
		Order("created_at_us DESC, id DESC")
	return q.oneOperation(db, ws, "operation on boundary", sourceID+"/"+turnID)
}

// LatestOperationStateOnBoundary reads the three columns of LatestOperationOnBoundary's row that
// the barrier needs. Every column costs the SQLite driver a conversion, and a whole operation row
// (34 columns) took three to four times as long to read as these three.
func (q queries) LatestOperationStateOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.OperationState, error) {
	rows, err := queryRows[operationStateRow](ctx, q, latestStateOnBoundarySQL, ws, sourceID, turnID)
	if err != nil {
		return forkengine.OperationState{}, classify(err, "operation on boundary %s/%s", sourceID, turnID)
	}
	if len(rows) == 0 {
		return forkengine.OperationState{}, notFound("operation on boundary", ws, sourceID+"/"+turnID)
	}
	r := rows[0]
	return forkengine.OperationState{ID: r.ID, Status: forkengine.OperationStatus(r.Status),
		AcknowledgedAt: fromMicrosPtr(r.AcknowledgedAtUs)}, nil
}

const latestStateOnBoundarySQL = `SELECT id, status, acknowledged_at_us FROM fork_operations
	WHERE workspace_id = ? AND source_session_id = ? AND through_turn_id = ? ORDER BY created_at_us DESC, id DESC LIMIT 1`

// operationStateRow is the part of an operation row an OperationState holds.
type operationStateRow struct {
	ID               string
	Status           string
	AcknowledgedAtUs *int64
}

func (r *operationStateRow) targets() []any { return []any{&r.ID, &r.Status, &r.AcknowledgedAtUs} }

// LatestOperationsOnBoundaries returns each boundary's newest operation, without its snapshot:
// one statement per chunk of boundaries, a row-value IN that the by-boundary index serves.
func (q queries) LatestOperationsOnBoundaries(ctx context.Context, ws string, boundaries []forkengine.Boundary) (map[forkengine.Boundary]forkengine.ForkOperation, error) {
	out := map[forkengine.Boundary]forkengine.ForkOperation{}
	distinct := slices.CompactFunc(slices.SortedFunc(slices.Values(boundaries), compareBoundaries),
		func(a, b forkengine.Boundary) bool { return a == b })
	for chunk := range slices.Chunk(distinct, q.dialect.maxParams/2) {
		pairs := make([]string, len(chunk))
		args := []any{ws}
		for i, b := range chunk {
			pairs[i] = "(?, ?)"
			args = append(args, b.SessionID, b.TurnID)
		}
		rows, err := queryRows[operationRow](ctx, q, "SELECT "+operationSelectList+` FROM fork_operations
			WHERE workspace_id = ? AND (source_session_id, through_turn_id) IN (`+strings.Join(pairs, ", ")+`)
			ORDER BY created_at_us, id`, args...)
		if err != nil {
			return nil, classify(err, "latest operations on %d boundaries", len(chunk))
		}
		for _, r := range rows {
			op, err := r.domain()
			if err != nil {
				return nil, err
			}
			out[forkengine.Boundary{SessionID: op.SourceSessionID, TurnID: op.ThroughTurnID}] = op // later rows win
		}
	}
	return out, nil
}

func compareBoundaries(a, b forkengine.Boundary) int {
	if c := strings.Compare(a.SessionID, b.SessionID); c != 0 {
		return c
	}
	return strings.Compare(a.TurnID, b.TurnID)
}

// OperationsBySourceIDs returns every operation whose source is one of sourceIDs, in
// (CreatedAt, ID) order.
func (q queries) OperationsBySourceIDs(ctx context.Context, ws string, sourceIDs []string) ([]forkengine.ForkOperation, error) {
	var out []forkengine.ForkOperation
	err := q.inChunks(sourceIDs, func(chunk []string) error {
		db := q.with(ctx).Where("workspace_id = ? AND source_session_id IN ?", ws, chunk).Order("created_at_us, id")
		ops, err := q.findOperations(db, "operations by sources")
		out = append(out, ops...)
		return err
	})
	// Chunks are each ordered; only a list longer than one chunk needs merging.
	slices.SortStableFunc(out, func(a, b forkengine.ForkOperation) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

// OperationReservingTarget returns the non-failed operation holding targetID, or ErrNotFound.
func (q queries) OperationReservingTarget(ctx context.Context, ws, targetID string) (forkengine.ForkOperation, error) {
	// The condition is a literal, so the planner can use the partial index fork_operations_target_reservation.
	ops, err := q.operationsWhere(ctx, "workspace_id = ? AND target_session_id = ? AND "+holdsTargetSQL+" LIMIT 1", ws, targetID)
	return firstOperation(ops, classify(err, "operation reserving target %s", targetID), ws, "operation reserving target", targetID)
}

func filterOperations(db *gorm.DB, ws string, f forkengine.OperationFilter) *gorm.DB {
	db = db.Where("workspace_id = ?", ws)
	if f.SourceSessionID != "" {
		db = db.Where("source_session_id = ?", f.SourceSessionID)
	}
	if f.TargetSessionID != "" {
		db = db.Where("target_session_id = ?", f.TargetSessionID)
	}
	if f.ThroughTurnID != "" {
		db = db.Where("through_turn_id = ?", f.ThroughTurnID)
	}
	if len(f.Statuses) > 0 {
		db = db.Where("status IN ?", f.Statuses)
	}
	return db
}

// ListOperations returns up to limit (<= 0: all) operations matching f after the cursor, in
// (CreatedAt, ID) order.
func (q queries) ListOperations(ctx context.Context, ws string, f forkengine.OperationFilter, after forkengine.PageCursor, n int) ([]forkengine.ForkOperation, error) {
	db := keyset(filterOperations(q.with(ctx), ws, f), after).Order("created_at_us, id")
	return q.findOperations(limit(db, n), "list operations")
}

// CountOperations counts the operations matching f.
func (q queries) CountOperations(ctx context.Context, ws string, f forkengine.OperationFilter) (int, error) {
	var n int64
	if err := filterOperations(q.with(ctx).Model(&operationRow{}), ws, f).Count(&n).Error; err != nil {
		return 0, classify(err, "count operations")
	}
	return int(n), nil
}

// RecoverableOperations pages the active operations of every workspace in (CreatedAt, ID) order.
func (q queries) RecoverableOperations(ctx context.Context, after forkengine.PageCursor, n int) ([]forkengine.ForkOperation, error) {
	db := keyset(q.with(ctx).Where(isActiveSQL), after).Order("created_at_us, id")
	return q.findOperations(limit(db, n), "recoverable operations")
}

// firstOperation is the first of ops, ErrNotFound when there is none, or err.
func firstOperation(ops []forkengine.ForkOperation, err error, ws, what, key string) (forkengine.ForkOperation, error) {
	switch {
	case err != nil:
		return forkengine.ForkOperation{}, err
	case len(ops) == 0:
		return forkengine.ForkOperation{}, notFound(what, ws, key)
	}
	return ops[0], nil
}
