package store

import "github.com/forkgraph/forkgraph/forkengine"

// The partial indexes of fork_operations select rows by two small columns kept beside status
// (migration 13) instead of by status itself: activity (activityActive while the saga moves,
// activityUnknown for an unknown delivery, activityDone after) and holds_target (1 unless the
// operation failed). An UPDATE that names a column a partial index's WHERE reads rewrites that
// index's entry even when the row stays in it; with the WHEREs on status every status change
// rewrote four index entries (four WAL pages), although prepared → dispatching and an
// acknowledgement leave the row in exactly the indexes it was in. A status change now names
// these columns only when their value changes (classUpdateSQL), so those updates touch no
// partial index, and a commit touches the three it leaves but not the target reservation.
//
// Both are derived from status alone, and only here: every write of a status (insert,
// compare-and-swap, rewrite) writes them from the same status, and a compare-and-swap from a
// status that leaves them out requires that status in its WHERE, so the stored values stay
// those of the stored status.
const (
	activityDone    = 0
	activityUnknown = 1
	activityActive  = 2
)

// The partial indexes' conditions as literals, so a planner can prove a query implies them.
const (
	isActiveSQL     = "activity = 2"     // fork_operations_active_boundary, fork_operations_recoverable
	isUnfinishedSQL = "activity > 0"     // fork_operations_unfinished_by_source
	holdsTargetSQL  = "holds_target = 1" // fork_operations_target_reservation
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

// holdsTargetOf is the holds_target column of an operation in status s: every operation but a
// failed one keeps its target id reserved.
func holdsTargetOf(s forkengine.OperationStatus) int64 {
	if s == forkengine.StatusFailed {
		return 0
	}
	return 1
}

// classColumns are the derived columns, in the order of classValues.
var classColumns = []string{"activity", "holds_target"}

// classValues are the derived columns of status s.
func classValues(s forkengine.OperationStatus) []any { return []any{activityOf(s), holdsTargetOf(s)} }

// classDerivationSQL computes the columns from status in SQL, for the migration's backfill; a
// test holds it equal to activityOf and holdsTargetOf for every status.
const classDerivationSQL = `activity = CASE WHEN status IN ('prepared', 'dispatching', 'provider_accepted') THEN 2
		WHEN status = 'unknown' THEN 1 ELSE 0 END,
	holds_target = CASE WHEN status = 'failed' THEN 0 ELSE 1 END`
