package store

import "github.com/forkgraph/forkgraph/forkengine"

// The partial indexes of fork_operations select rows by a small column kept beside status
// (migration 13) instead of by status itself: activity, activityActive while the saga moves,
// activityUnknown for an unknown delivery, activityDone after. An UPDATE that names a column a
// partial index's WHERE reads rewrites that index's entry even when the row stays in it; with
// the WHEREs on status every status change rewrote four index entries (four WAL pages), although
// prepared → dispatching and an acknowledgement leave the row in exactly the indexes it was in.
// A status change now names activity only when its value changes (classChanges), so those
// updates touch no partial index.
//
// holds_target is 1 while the operation reserves its target id and NULL once it failed. NULLs
// never collide in a unique index (SQLite and PostgreSQL alike), so one unique index on
// (workspace_id, target_session_id, holds_target) both enforces one reservation per target and
// finds every operation of a target, where a partial unique index and a plain one each cost
// every new operation an entry; and a commit, which keeps the reservation, does not touch it.
//
// Both columns are derived from status alone, and only here: every write of a status (insert,
// compare-and-swap, rewrite) writes them from the same status, and a compare-and-swap that leaves
// one out requires in its WHERE a status with the same value, so the stored values stay those of
// the stored status.
const (
	activityDone    = 0
	activityUnknown = 1
	activityActive  = 2
)

// The indexes' conditions as literals, so a planner can prove a query implies them.
const (
	isActiveSQL     = "activity = 2"     // fork_operations_active_boundary, fork_operations_recoverable
	isUnfinishedSQL = "activity > 0"     // fork_operations_unfinished_by_source
	holdsTargetSQL  = "holds_target = 1" // the reserving operation, in fork_operations_target_reservation
)

// activityOf is the activity column of an operation in status s.
func activityOf(s forkengine.OperationStatus) int64 {
	switch s {
	case forkengine.StatusPrepared, forkengine.StatusDispatching, forkengine.StatusProviderAccepted:
		return activityActive
	case forkengine.StatusUnknown:
		return activityUnknown
	}
	return activityDone
}

// holdsTargetOf is the holds_target column of an operation in status s: 1 for every operation
// but a failed one, whose is NULL.
func holdsTargetOf(s forkengine.OperationStatus) *int64 {
	if s == forkengine.StatusFailed {
		return nil
	}
	one := int64(1)
	return &one
}

// classColumns are the derived columns, in the order of classValues.
var classColumns = []string{"activity", "holds_target"}

// classValues are the derived columns of status s.
func classValues(s forkengine.OperationStatus) []any {
	if s == forkengine.StatusFailed {
		return []any{activityOf(s), nil}
	}
	return []any{activityOf(s), int64(1)}
}

// classDerivationSQL computes the columns from status in SQL, for the migration's backfill; a
// test holds it equal to activityOf and holdsTargetOf for every status.
const classDerivationSQL = `activity = CASE WHEN status IN ('prepared', 'dispatching', 'provider_accepted') THEN 2
		WHEN status = 'unknown' THEN 1 ELSE 0 END,
	holds_target = CASE WHEN status = 'failed' THEN NULL ELSE 1 END`
