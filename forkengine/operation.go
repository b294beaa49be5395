package forkengine

import (
	"encoding/json"
	"time"
)

// OperationStatus is the internal status of a fork operation (the saga).
type OperationStatus string

// Internal fork operation statuses.
const (
	StatusPrepared         OperationStatus = "prepared"
	StatusDispatching      OperationStatus = "dispatching"
	StatusProviderAccepted OperationStatus = "provider_accepted"
	StatusCommitted        OperationStatus = "committed"
	StatusFailed           OperationStatus = "failed"
	StatusUnknown          OperationStatus = "unknown"
)

// Active reports whether the saga is still moving (prepared, dispatching, provider_accepted).
func (s OperationStatus) Active() bool {
	return s == StatusPrepared || s == StatusDispatching || s == StatusProviderAccepted
}

// Terminal reports whether the saga stopped moving by itself: committed and failed for good;
// unknown until reconciliation or a person resolves it.
func (s OperationStatus) Terminal() bool {
	return s == StatusCommitted || s == StatusFailed || s == StatusUnknown
}

// transitions is the one table of legal moves of the fork state machine. Every status change goes
// through CanTransition; a move to the status a row already has is an idempotent no-op elsewhere.
var transitions = map[OperationStatus][]OperationStatus{
	StatusPrepared:         {StatusDispatching, StatusFailed},
	StatusDispatching:      {StatusProviderAccepted, StatusFailed, StatusUnknown},
	StatusProviderAccepted: {StatusCommitted},
	StatusCommitted:        nil, // acknowledge stamps AcknowledgedAt; the status stays
	StatusFailed:           nil,
	// Never dispatched again. Only an answer resolves it: reconciliation found the child
	// (provider_accepted, then the normal commit), or it found none or a person abandoned it
	// (failed).
	StatusUnknown: {StatusProviderAccepted, StatusFailed},
}

// CanTransition reports whether from → to is a legal move.
func CanTransition(from, to OperationStatus) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// PublicStatus is the status clients see.
type PublicStatus string

// Public statuses.
const (
	PublicAccepted  PublicStatus = "accepted"
	PublicCommitted PublicStatus = "committed"
	PublicFailed    PublicStatus = "failed"
	PublicUnknown   PublicStatus = "unknown"
)

// PublicPhase is the finer-grained phase clients see.
type PublicPhase string

// Public phases.
const (
	PhaseFrozen          PublicPhase = "frozen"
	PhaseDispatching     PublicPhase = "dispatching"
	PhaseMaterializing   PublicPhase = "materializing"
	PhaseCommitted       PublicPhase = "committed"
	PhaseFailed          PublicPhase = "failed"
	PhaseDeliveryUnknown PublicPhase = "delivery_unknown"
)

var publicProjection = map[OperationStatus]struct {
	status PublicStatus
	phase  PublicPhase
}{
	StatusPrepared:         {PublicAccepted, PhaseFrozen},
	StatusDispatching:      {PublicAccepted, PhaseDispatching},
	StatusProviderAccepted: {PublicAccepted, PhaseMaterializing},
	StatusCommitted:        {PublicCommitted, PhaseCommitted},
	StatusFailed:           {PublicFailed, PhaseFailed},
	StatusUnknown:          {PublicUnknown, PhaseDeliveryUnknown},
}

// Public maps an internal status to the (status, phase) pair clients see.
func (s OperationStatus) Public() (PublicStatus, PublicPhase) {
	p := publicProjection[s]
	return p.status, p.phase
}

// BindingMode says who makes a forked child resumable in the provider.
type BindingMode string

// Binding modes.
const (
	BindingHostCopy      BindingMode = "host_copy"      // the host copies provider state; child turns keep source bindings
	BindingProviderOwned BindingMode = "provider_owned" // the provider returns a binding per bound turn and a receipt
)

// Valid reports whether m is a known mode.
func (m BindingMode) Valid() bool { return m == BindingHostCopy || m == BindingProviderOwned }

// TurnBinding is a provider turn handle returned for a child turn in provider_owned mode.
type TurnBinding struct {
	ProviderTurnID string          `json:"providerTurnId"`
	Binding        json.RawMessage `json:"binding"`
}

// ForkOperation is the durable record of one fork.
type ForkOperation struct {
	WorkspaceID     string
	ID              string
	RequestID       string
	RequestHash     string // sha256 of the canonical request body, without RequestID
	SourceSessionID string
	TargetSessionID string
	ThroughTurnID   string
	TargetTurnID    string // the boundary turn's id in the target, set at commit

	SourceProviderSessionID   string
	SourceProviderTurnID      string
	SourceProviderTurnBinding json.RawMessage

	Provider      string
	DriverKind    string
	DriverVersion string
	Status        OperationStatus
	Error         string
	// ErrorReason is a stable code for why a failed operation failed when the engine knows one:
	// reconciled_absent (the provider has no child), abandoned (a person stopped waiting; Error
	// holds their reason).
	ErrorReason string

	// ReconcileAttempts counts the times the provider was asked what became of an unknown
	// delivery; LastReconciledAt is the last, NextReconcileAt the next one scheduled (nil: none,
	// because the operation is not unknown or its driver cannot reconcile).
	ReconcileAttempts int
	LastReconciledAt  *time.Time
	NextReconcileAt   *time.Time

	TargetTitle             string
	TargetProviderSessionID string
	StateBindingMode        BindingMode
	TargetTurnBindings      []TurnBinding
	Receipt                 string

	Snapshot     Snapshot
	SnapshotHash string

	// LeaseOwner is the instance that drives the operation while it is unfinished, until
	// LeaseExpiresAt; it renews the lease while it works. Every status change is a compare and
	// swap on the owner as well as the status, so an instance whose lease was taken over can no
	// longer move the operation. Only InsertOperation, Store.ClaimOperations and
	// Store.RenewLeases write the lease; UpdateOperation keeps the stored one.
	LeaseOwner     string
	LeaseExpiresAt *time.Time

	CreatedAt      time.Time
	UpdatedAt      time.Time
	DispatchedAt   *time.Time
	AcceptedAt     *time.Time
	CompletedAt    *time.Time
	AcknowledgedAt *time.Time
}

// Acknowledged reports whether a client has confirmed it saw the committed result.
func (op ForkOperation) Acknowledged() bool { return op.AcknowledgedAt != nil }

// OperationState is the part of an operation the barrier decides on (Reader's
// LatestOperationStateOnBoundary).
type OperationState struct {
	ID             string
	Status         OperationStatus
	AcknowledgedAt *time.Time
}

// State returns op's OperationState.
func (op ForkOperation) State() OperationState {
	return OperationState{ID: op.ID, Status: op.Status, AcknowledgedAt: op.AcknowledgedAt}
}

// Snapshot is the source history frozen when a fork is prepared. Later changes to the source never
// change it; the commit copies exactly this.
type Snapshot struct {
	Version  int       `json:"version"`
	Session  Session   `json:"session"`
	Turns    []Turn    `json:"turns"`    // sequence order, ending with the boundary turn
	Messages []Message `json:"messages"` // transcript order
}

// clone returns a deep copy of s: no slice, binding or time pointer is shared with it.
func (s Snapshot) clone() Snapshot {
	s.Session.Settings = cloneJSON(s.Session.Settings)
	s.Session.DeletedAt = clonePtr(s.Session.DeletedAt)
	if s.Turns != nil {
		turns := make([]Turn, len(s.Turns))
		for i, t := range s.Turns {
			t.SettledAt = clonePtr(t.SettledAt)
			t.ProviderTurnBinding = cloneJSON(t.ProviderTurnBinding)
			turns[i] = t
		}
		s.Turns = turns
	}
	if s.Messages != nil {
		s.Messages = append([]Message(nil), s.Messages...)
	}
	return s
}

func cloneJSON(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return append(json.RawMessage{}, raw...)
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
