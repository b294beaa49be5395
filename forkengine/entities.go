package forkengine

import (
	"bytes"
	"encoding/json"
	"time"
)

// SessionKind says whether a session is a user-facing conversation (root) or a provider-native
// sub-agent (child). Only root sessions can be fork sources; a fork target is always root.
type SessionKind string

// Session kinds.
const (
	SessionRoot  SessionKind = "root"
	SessionChild SessionKind = "child"
)

// Valid reports whether k is a known kind.
func (k SessionKind) Valid() bool { return k == SessionRoot || k == SessionChild }

// TurnPhase is where a turn is in its life. Phases only move forward, in the order declared.
type TurnPhase string

// Turn phases, in order.
const (
	PhaseSubmitted TurnPhase = "submitted"
	PhaseRunning   TurnPhase = "running"
	PhaseWaiting   TurnPhase = "waiting"
	PhaseSettling  TurnPhase = "settling"
	PhaseSettled   TurnPhase = "settled"
)

var phaseRank = map[TurnPhase]int{
	PhaseSubmitted: 1, PhaseRunning: 2, PhaseWaiting: 3, PhaseSettling: 4, PhaseSettled: 5,
}

// Valid reports whether p is a known phase.
func (p TurnPhase) Valid() bool { return phaseRank[p] > 0 }

// Rank orders phases: a report may never lower a turn's rank.
func (p TurnPhase) Rank() int { return phaseRank[p] }

// TurnOutcome is how a settled turn ended. It is empty until the turn is settled.
type TurnOutcome string

// Turn outcomes.
const (
	OutcomeCompleted   TurnOutcome = "completed"
	OutcomeFailed      TurnOutcome = "failed"
	OutcomeCanceled    TurnOutcome = "canceled"
	OutcomeInterrupted TurnOutcome = "interrupted"
)

// Valid reports whether o is a known outcome.
func (o TurnOutcome) Valid() bool {
	switch o {
	case OutcomeCompleted, OutcomeFailed, OutcomeCanceled, OutcomeInterrupted:
		return true
	}
	return false
}

// MessageRole says who wrote a message.
type MessageRole string

// Message roles.
const (
	RoleUser      MessageRole = "user"
	RoleAssistant MessageRole = "assistant"
	RoleTool      MessageRole = "tool"
	RoleSystem    MessageRole = "system"
)

// Valid reports whether r is a known role.
func (r MessageRole) Valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleTool, RoleSystem:
		return true
	}
	return false
}

// Session is one conversation of an agent in a workspace. Its tags describe each field once for
// the generic plumbing (session_fields.go): the place and key of the field in snapshots.
type Session struct {
	WorkspaceID       string          `snapshot:"1,w"`
	ID                string          `snapshot:"2,i"`
	Kind              SessionKind     `snapshot:"3,k"`
	Provider          string          `snapshot:"4,p"`  // driver name, e.g. "simulated"
	ProviderSessionID string          `snapshot:"5,ps"` // a fork source needs one
	Title             string          `snapshot:"6,ti"`
	RailSectionKey    string          `snapshot:"7,r"`
	Cwd               string          `snapshot:"8,cw"`
	Model             string          `snapshot:"9,mo"`
	Settings          json.RawMessage `snapshot:"10,se"`                   // a JSON object; never nil once stored ("{}")
	Metadata          json.RawMessage `json:",omitempty" snapshot:"15,md"` // a JSON object, or nil when none was reported
	RailProjectPath   string          `json:",omitempty" snapshot:"16,rp"` // the sidebar's project; a fork copies it
	// RuntimeContext is the runtime's own context of the session (reference §1.1, the
	// internal runtimeContext: worktree isolation, snapshot facts), a JSON object or nil. A
	// fork's child gets the prepared one (childFieldRules).
	RuntimeContext json.RawMessage `json:",omitempty" snapshot:"17,rc"`
	Visible        bool            `snapshot:"11,vi"`
	CreatedAt      time.Time       `snapshot:"12,ca"`
	UpdatedAt      time.Time       `snapshot:"13,ua"`
	DeletedAt      *time.Time      `snapshot:"14,da"`
}

// Clone returns a deep copy of s.
func (s Session) Clone() Session {
	s.Settings, s.Metadata, s.RuntimeContext = cloneJSON(s.Settings), cloneJSON(s.Metadata), cloneJSON(s.RuntimeContext)
	s.DeletedAt = clonePtr(s.DeletedAt)
	return s
}

// SessionReport is an idempotent upsert of a session by an agent runtime. Its tags say how each
// field is applied to the stored session of the same field name and checked (session_fields.go):
// a kept field left nil keeps the stored value (or the default for a new session); texts are
// free text unless they name something (check:"identifier"); JSON must be an object.
type SessionReport struct {
	WorkspaceID       string          `report:"key"`
	ID                string          `report:"key"`
	Kind              SessionKind     `report:"replace"` // default root
	Provider          string          `report:"replace" check:"identifier"`
	ProviderSessionID *string         `report:"keep" check:"identifier"`
	Title             *string         `report:"keep"`
	RailSectionKey    *string         `report:"keep" check:"identifier"`
	RailProjectPath   *string         `report:"keep"`
	Cwd               *string         `report:"keep"`
	Model             *string         `report:"keep" check:"identifier"`
	Settings          json.RawMessage `report:"keep"`
	Metadata          json.RawMessage `report:"keep"`
	RuntimeContext    json.RawMessage `report:"keep"`
	Visible           *bool           `report:"keep"`
}

// Deleted reports whether the session is soft-deleted.
func (s Session) Deleted() bool { return s.DeletedAt != nil }

// Turn is one prompt of a session and the agent's work on it.
type Turn struct {
	WorkspaceID string
	SessionID   string
	ID          string
	Sequence    int64 // strictly increasing per session, assigned by the engine
	Phase       TurnPhase
	Outcome     TurnOutcome // empty unless Phase is settled
	// Origin is the stored origin: a TurnOrigin value, or free text a turn was reported with
	// before the set was closed (OriginKind reads that as legacy_unknown).
	Origin string
	// Error, FileChanges and CompletedCommand are what the runtime reported of the turn's
	// result (turn_details.go); nil when not reported.
	Error            *TurnError
	FileChanges      []FileChange
	CompletedCommand *CompletedCommand
	StartedAt        time.Time
	SettledAt        *time.Time
	UpdatedAt        time.Time

	// ProviderTurnID and ProviderTurnBinding are the provider's own handle on the turn; the binding
	// is an opaque JSON object owned by the driver.
	ProviderTurnID      string
	ProviderTurnBinding json.RawMessage
}

// Settled reports whether the turn has finished.
func (t Turn) Settled() bool { return t.Phase == PhaseSettled }

// HasProviderBinding reports whether a persisted provider binding exists: a provider turn id that is
// not a copy of the canonical id, and a binding that is a non-empty JSON object.
func (t Turn) HasProviderBinding() bool {
	if t.ID == "" || t.ProviderTurnID == "" || t.ProviderTurnID == t.ID {
		return false
	}
	return isNonEmptyObject(t.ProviderTurnBinding)
}

// isNonEmptyObject reports whether raw is valid JSON and an object with at least one member:
// what decoding it into a map and counting the entries answers, without the map. Every turn
// of a listed page is asked (forkability), so this runs once per row.
func isNonEmptyObject(raw json.RawMessage) bool {
	if !json.Valid(raw) {
		return false
	}
	rest := bytes.TrimLeft(raw, " \t\r\n")
	if len(rest) == 0 || rest[0] != '{' {
		return false
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	return len(rest) > 0 && rest[0] != '}'
}

// Message is one entry of a session's transcript.
type Message struct {
	WorkspaceID string
	SessionID   string
	TurnID      string
	ID          string
	Position    int64 // order within the workspace's transcript; assigned by the store on insert
	Role        MessageRole
	// Content is the plain text: the message itself when Parts is nil, else RenderParts(Parts).
	Content string
	// Parts are the typed parts (message_parts.go); nil for a plain-text message.
	Parts     []MessagePart
	CreatedAt time.Time
}

// Lineage records that a root session was created by forking another through one turn.
type Lineage struct {
	WorkspaceID     string
	OperationID     string
	SourceSessionID string
	SourceTurnID    string
	TargetSessionID string
	TargetTurnID    string
	ForkedAt        time.Time
}

// LifecycleCapabilities are the session-level fork capabilities resolved from a driver descriptor.
type LifecycleCapabilities struct {
	Fork            bool // full-session fork; no driver supports it
	ForkThroughTurn bool
}

// BindingState is the public forkability state of a turn.
type BindingState string

// Binding states.
const (
	BindingBound            BindingState = "bound"
	BindingRecoveryRequired BindingState = "recovery_required"
	BindingUnavailable      BindingState = "unavailable"
)

// TurnBindingState derives the public state from a turn and its probed availability.
func TurnBindingState(t Turn, available bool) BindingState {
	switch {
	case available:
		return BindingBound
	case t.Settled():
		return BindingRecoveryRequired
	default:
		return BindingUnavailable
	}
}
