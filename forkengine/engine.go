package forkengine

import (
	"encoding/json"
	"log/slog"
	"time"
)

// Config wires an Engine. Store and Drivers are required; the rest have defaults.
type Config struct {
	Store   Store
	Drivers map[string]Driver // by Session.Provider
	// Publisher receives events after commit (default: none). Usually a *Broker.
	Publisher Publisher
	Clock     Clock         // default: time.Now in UTC, truncated to microseconds
	NewID     func() string // default: random UUIDv4
	Logger    *slog.Logger  // default: slog.Default()
	// DisableBarrier turns the committed-but-unacknowledged barrier off (SPEC §2.6). With it off,
	// only an active operation on the boundary blocks a new request (FORK_IN_PROGRESS).
	DisableBarrier bool
	// DispatchTimeout bounds one driver Fork call (default 30s); a timeout is delivery unknown.
	DispatchTimeout time.Duration
	// RecoveryPageSize is the page size of start-up recovery (default 100, at most 1000).
	RecoveryPageSize int
	// NoBackground keeps started operations prepared instead of dispatching them in the
	// background; recovery or ProcessOperation drive them. Used by tests and the crash harness.
	NoBackground bool
}

// SessionReport is an idempotent upsert of a session by an agent runtime. Nil pointer fields keep
// the stored value (or the default for a new session).
type SessionReport struct {
	WorkspaceID       string
	ID                string
	Kind              SessionKind // default root
	Provider          string
	ProviderSessionID *string
	Title             *string
	RailSectionKey    *string
	Cwd               *string
	Model             *string
	Settings          json.RawMessage // nil keeps; must be a JSON object
	Visible           *bool
}

// TurnReport is an idempotent upsert of a turn. A new id appends a turn with the next sequence; a
// known id moves it forward. Phases never go backwards; an outcome is given exactly when settled.
type TurnReport struct {
	WorkspaceID         string
	SessionID           string
	ID                  string
	Phase               TurnPhase
	Outcome             TurnOutcome
	Origin              *string
	ProviderTurnID      *string
	ProviderTurnBinding json.RawMessage // nil keeps; must be a JSON object
}

// MessageInput is one message to append. An empty ID gets a generated one; an existing ID with the
// same role and content is skipped (idempotent), with other content it is rejected.
type MessageInput struct {
	ID      string
	Role    MessageRole
	Content string
}

// MessageAppend appends messages to a turn of a session.
type MessageAppend struct {
	WorkspaceID string
	SessionID   string
	TurnID      string
	Messages    []MessageInput
}

// ForkInput starts a fork. TargetSessionID may be empty: the engine picks one deterministically
// from (workspace, request id), so a replay of the same request gets the same target.
type ForkInput struct {
	WorkspaceID     string
	SourceSessionID string
	ThroughTurnID   string
	RequestID       string
	TargetSessionID string
}

// ForkabilityQuery names one turn of one session for a forkability probe.
type ForkabilityQuery struct {
	Session Session
	Turn    Turn
}

// RecoveryReport says what start-up recovery did.
type RecoveryReport struct {
	Scanned   int
	Unknown   int // dispatching → unknown
	Committed int // prepared or provider_accepted → committed
	Failed    int
	Errors    []error
}
