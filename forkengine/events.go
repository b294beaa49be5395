package forkengine

import "time"

// EventKind says what changed.
type EventKind string

// Event kinds.
const (
	EventSessionUpserted      EventKind = "session_upserted"
	EventSessionDeleted       EventKind = "session_deleted"
	EventTurnUpserted         EventKind = "turn_upserted"
	EventForkOperationUpdated EventKind = "fork_operation_updated"
)

// Event is one entry of a workspace's durable, ordered change log. It names what changed; readers
// load the current state by id. Events are written in the transaction that makes the change and
// published to subscribers only after it commits.
type Event struct {
	Cursor      int64 // assigned by the store; strictly increasing across the log
	WorkspaceID string
	Kind        EventKind
	SessionID   string
	TurnID      string
	OperationID string
	// Status is the operation's internal status at the time of the event (fork events only), so a
	// subscriber following one operation sees every transition even when it reads later.
	Status     OperationStatus
	OccurredAt time.Time
}
