package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

var selectOperations = "SELECT " + operationsTable.list("") + " FROM fork_operations WHERE "

// operationsWithoutSnapshots reads the operations a fixed WHERE clause (with its ORDER BY and
// LIMIT) selects, every Snapshot zero; none is an empty list, not nil.
func (q queries) operationsWithoutSnapshots(ctx context.Context, what, where string, args ...any) ([]forkengine.ForkOperation, error) {
	out := []forkengine.ForkOperation{}
	err := eachOf(ctx, q, operationsTable, selectOperations+where, args, func(op *forkengine.ForkOperation) { out = append(out, *op) })
	if err != nil {
		return nil, classify(err, "%s", what)
	}
	return out, nil
}

// operations is operationsWithoutSnapshots with the snapshots attached.
func (q queries) operations(ctx context.Context, what, where string, args ...any) ([]forkengine.ForkOperation, error) {
	ops, err := q.operationsWithoutSnapshots(ctx, what, where, args...)
	if err != nil {
		return nil, err
	}
	if err := q.attachSnapshots(ctx, ops); err != nil {
		return nil, err
	}
	return ops, nil
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

// snapshotReads are the columns a read of snapshots by operation takes.
var (
	snapshotReads      = snapshotsTable.only("operation_id", "snapshot")
	selectSnapshotsSQL = snapshotReads.selectSQL() + " WHERE workspace_id = ? AND operation_id IN "
)

// loadSnapshots reads and decodes the stored snapshots of ids; every one must exist.
func (q queries) loadSnapshots(ctx context.Context, ws string, ids []string, found func(id string, s forkengine.Snapshot)) error {
	in, args := q.inList(ids, ws)
	var row snapshotRow
	var decodeErr error
	n := 0
	err := scanEach(ctx, q, selectSnapshotsSQL+in,
		args, snapshotReads.targets(&row), func() {
			n++
			if decodeErr != nil {
				return
			}
			s, err := decodeSnapshot(row.text)
			if err != nil {
				decodeErr = fmt.Errorf("decode snapshot of operation %s: %w", row.operationID, err)
				return
			}
			found(row.operationID, s)
		})
	if err != nil {
		return classify(err, "read snapshots of %d operations", len(ids))
	}
	if decodeErr != nil {
		return decodeErr
	}
	if n != len(ids) {
		return fmt.Errorf("read snapshots: %d of %d operations have none", len(ids)-n, len(ids))
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

// GetOperation returns one operation, or ErrNotFound.
func (q queries) GetOperation(ctx context.Context, ws, id string) (forkengine.ForkOperation, error) {
	ops, err := q.operations(ctx, "operation "+id, "workspace_id = ? AND id = ?", ws, id)
	return firstOperation(ops, err, ws, "operation", id)
}

// OperationsByIDs returns the existing operations among ids, keyed by id.
func (q queries) OperationsByIDs(ctx context.Context, ws string, ids []string) (map[string]forkengine.ForkOperation, error) {
	out := map[string]forkengine.ForkOperation{}
	err := q.inChunks(ids, func(chunk []string) error {
		in, args := q.inList(chunk, ws)
		ops, err := q.operations(ctx, "operations by ids", "workspace_id = ? AND id IN "+in, args...)
		for _, op := range ops {
			out[op.ID] = op
		}
		return err
	})
	return out, err
}

// GetOperationByRequestID returns the workspace's operation for a request id, or ErrNotFound.
func (q queries) GetOperationByRequestID(ctx context.Context, ws, requestID string) (forkengine.ForkOperation, error) {
	ops, err := q.operations(ctx, "operation with request id "+requestID, "workspace_id = ? AND request_id = ?", ws, requestID)
	return firstOperation(ops, err, ws, "operation with request id", requestID)
}

// LatestOperationOnBoundary returns the newest (CreatedAt, ID) operation forking sourceID through
// turnID, or ErrNotFound.
func (q queries) LatestOperationOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.ForkOperation, error) {
	key := sourceID + "/" + turnID
	ops, err := q.operations(ctx, "operation on boundary "+key,
		"workspace_id = ? AND source_session_id = ? AND through_turn_id = ? ORDER BY "+newestFirst+" LIMIT 1", ws, sourceID, turnID)
	return firstOperation(ops, err, ws, "operation on boundary", key)
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
		err := eachOf(ctx, q, operationsTable, selectOperations+`workspace_id = ? AND (source_session_id, through_turn_id) IN (`+
			strings.Join(pairs, ", ")+`) ORDER BY created_at_us, id`, args, func(op *forkengine.ForkOperation) {
			out[forkengine.Boundary{SessionID: op.SourceSessionID, TurnID: op.ThroughTurnID}] = *op // later rows win
		})
		if err != nil {
			return nil, classify(err, "latest operations on %d boundaries", len(chunk))
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
		in, args := q.inList(chunk, ws)
		ops, err := q.operations(ctx, "operations by sources", "workspace_id = ? AND source_session_id IN "+in+" ORDER BY created_at_us, id", args...)
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
	ops, err := q.operations(ctx, "operation reserving target "+targetID,
		"workspace_id = ? AND target_session_id = ? AND "+holdsTargetSQL+" LIMIT 1", ws, targetID)
	return firstOperation(ops, err, ws, "operation reserving target", targetID)
}

// operationFilterSQL is the WHERE clause of the operations f selects in ws, and its arguments.
func operationFilterSQL(ws string, f forkengine.OperationFilter) (string, []any) {
	where, args := "workspace_id = ?", []any{ws}
	for _, c := range []struct{ column, value string }{{"source_session_id", f.SourceSessionID},
		{"target_session_id", f.TargetSessionID}, {"through_turn_id", f.ThroughTurnID}} {
		if c.value != "" {
			where, args = where+" AND "+c.column+" = ?", append(args, c.value)
		}
	}
	if len(f.Statuses) > 0 {
		where += " AND status IN " + placeholders(len(f.Statuses))
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
	}
	return where, args
}

// afterSQL is keyset's condition for a fixed WHERE: "strictly after (time, id)", nothing for
// the zero cursor. It is a row-value comparison on purpose: SQLite (3.15 and later) and
// PostgreSQL both seek an index on (..., created_at_us, id) to the cursor with it, where the
// equivalent "created_at_us > ? OR (created_at_us = ? AND id > ?)" made SQLite walk the index
// from the start of the workspace, so late pages slowed down.
func afterSQL(where string, args []any, after forkengine.PageCursor) (string, []any) {
	if after.IsZero() {
		return where, args
	}
	return where + " AND (created_at_us, id) > (?, ?)", append(args, micros(after.Time), after.ID)
}

// ListOperations returns up to limit (<= 0: all) operations matching f after the cursor, in
// (CreatedAt, ID) order.
func (q queries) ListOperations(ctx context.Context, ws string, f forkengine.OperationFilter, after forkengine.PageCursor, n int) ([]forkengine.ForkOperation, error) {
	where, args := operationFilterSQL(ws, f)
	where, args = afterSQL(where, args, after)
	return q.operations(ctx, "list operations", where+" ORDER BY created_at_us, id"+limitSQL(n), args...)
}

// CountOperations counts the operations matching f.
func (q queries) CountOperations(ctx context.Context, ws string, f forkengine.OperationFilter) (int, error) {
	where, args := operationFilterSQL(ws, f)
	n, err := q.queryInt(ctx, "SELECT COUNT(*) FROM fork_operations WHERE "+where, args...)
	if err != nil {
		return 0, classify(err, "count operations")
	}
	return int(n), nil
}

// RecoverableOperations pages the active operations of every workspace in (CreatedAt, ID) order.
func (q queries) RecoverableOperations(ctx context.Context, after forkengine.PageCursor, n int) ([]forkengine.ForkOperation, error) {
	where, args := afterSQL(isActiveSQL, nil, after)
	return q.operations(ctx, "recoverable operations", where+" ORDER BY created_at_us, id"+limitSQL(n), args...)
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
