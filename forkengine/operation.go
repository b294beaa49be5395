package forkengine

import (
	"encoding/json"
	"slices"
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

	TargetTitle string
	// Target is the target's settings and context frozen at prepare from the request's overlay
	// and prepared context (reference §5.5); nil when the request named none, and then the child
	// copies the source's (TargetValues). Like the snapshot, it never changes after insert.
	Target                  *ForkTarget
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

	// RequestedBy is the subject that asked for the fork (ForkInput.RequestedBy) and
	// AcknowledgedBy the one whose acknowledgement was first; "" when unknown (open mode, or
	// operations from before they were recorded).
	RequestedBy    string
	AcknowledgedBy string
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

// Snapshot is what a fork froze of its source when it was prepared. Later changes to the source
// never change what the fork commits.
//
// Version 1 (operations prepared before shared history) holds the whole prefix in Turns and
// Messages, and the commit copies it. Version 2 is a reference: the boundary turn, the child's
// segments (History.Segments of the source cut at the boundary, then the source's own rows at
// the watermark) and the prefix turns the child holds rows of its own for; its size does not
// depend on the transcript.
type Snapshot struct {
	Version  int       `json:"version"`
	Session  Session   `json:"session"`
	Turns    []Turn    `json:"turns"`    // version 1: sequence order, ending with the boundary turn
	Messages []Message `json:"messages"` // version 1: transcript order

	Boundary    *Turn            `json:"boundary,omitempty"` // version 2: the boundary turn as frozen
	Segments    []HistorySegment `json:"segments,omitempty"`
	PrefixTurns int              `json:"prefixTurns,omitempty"`
	BoundTurns  int              `json:"boundTurns,omitempty"`
	// Overrides are the prefix turns, as frozen, that the child stores rows of its own for: those
	// not settled then (the child settles them as interrupted) and those without a provider
	// binding then (so a binding written later never reaches the child).
	Overrides []Turn `json:"overrides,omitempty"`
	// Interactions are the prefix turns' interactions as frozen (version 2): the child gets
	// copies of them (fork_interactions.go), never the source's later changes.
	Interactions []FrozenInteraction `json:"interactions,omitempty"`
	// AuditMessages are the source's audit messages placed before the boundary, as a snapshot
	// frozen before migration 28 holds them. A commit no longer copies them: the child reads
	// them through its History, which gives the same rows (audit messages never change).
	AuditMessages []AuditMessage `json:"auditMessages,omitempty"`
	// AuditBound is the history clock's value when the snapshot was frozen (version 2): the
	// child inherits the audit messages placed before the boundary with positions at or below
	// it, so one appended to the source after prepare never reaches the child, whatever its
	// place (InheritsAudit).
	AuditBound int64 `json:"auditBound,omitempty"`
	// PrefixMessages is the number of messages the Segments present (version 2), read from the
	// source's kept counts at the freeze (Prefix.InheritedMessages); the commit stores it as the
	// child's History.InheritedMessages instead of summing the prefix's turns, when the freeze
	// counted them (PrefixCount).
	PrefixMessages int64 `json:"prefixMessages,omitempty"`
	// PrefixCounted says the freeze counted the prefix's messages, so PrefixMessages is the count
	// even when it is 0 (a prefix of no messages, which the commit used to count again). A
	// snapshot frozen before it holds false: its count is PrefixMessages when not 0, and unknown
	// otherwise (a walked prefix or one frozen before the counts; the commit counts then). It is
	// hashed only when set, so those snapshots keep their hashes.
	PrefixCounted bool `json:"prefixCounted,omitempty"`
}

// PrefixCount is the number of messages the Segments present as the freeze counted them, and
// whether it counted them.
func (s Snapshot) PrefixCount() (int64, bool) {
	return s.PrefixMessages, s.PrefixCounted || s.PrefixMessages != 0
}

// Shared reports whether s is a version 2 reference snapshot.
func (s Snapshot) Shared() bool { return s.Boundary != nil }

// through is the boundary turn the snapshot ends with, and whether it has one.
func (s Snapshot) through() (Turn, bool) {
	switch {
	case s.Boundary != nil:
		return *s.Boundary, true
	case len(s.Turns) > 0:
		return s.Turns[len(s.Turns)-1], true
	}
	return Turn{}, false
}

// Clone returns a deep copy of s: no slice, binding or time pointer is shared with it. Stores
// hand out clones, so what a caller does with a value read never reaches another reader.
func (s Snapshot) Clone() Snapshot {
	s.Session = s.Session.Clone()
	s.Turns = cloneTurns(s.Turns)
	if s.Messages != nil {
		s.Messages = append([]Message(nil), s.Messages...)
	}
	if s.Boundary != nil {
		b := s.Boundary.Clone()
		s.Boundary = &b
	}
	if s.Segments != nil {
		s.Segments = append([]HistorySegment(nil), s.Segments...)
		for i := range s.Segments {
			s.Segments[i].Via = slices.Clone(s.Segments[i].Via)
		}
	}
	s.Overrides = cloneTurns(s.Overrides)
	if s.Interactions != nil {
		frozen := make([]FrozenInteraction, len(s.Interactions))
		for i, f := range s.Interactions {
			frozen[i] = FrozenInteraction{Sequence: f.Sequence, Interaction: f.Interaction.Clone()}
		}
		s.Interactions = frozen
	}
	if s.AuditMessages != nil {
		s.AuditMessages = append([]AuditMessage(nil), s.AuditMessages...)
	}
	return s
}

// Clone returns a deep copy of t.
func (t Turn) Clone() Turn {
	t.SettledAt = clonePtr(t.SettledAt)
	t.ProviderTurnBinding = cloneJSON(t.ProviderTurnBinding)
	cloneTurnDetails(&t)
	return t
}

func cloneTurns(turns []Turn) []Turn {
	if turns == nil {
		return nil
	}
	out := make([]Turn, len(turns))
	for i, t := range turns {
		out[i] = t.Clone()
	}
	return out
}

// Clone returns a deep copy of op, its snapshot included.
func (op ForkOperation) Clone() ForkOperation {
	op.SourceProviderTurnBinding = cloneJSON(op.SourceProviderTurnBinding)
	if op.TargetTurnBindings != nil {
		bindings := make([]TurnBinding, len(op.TargetTurnBindings))
		for i, b := range op.TargetTurnBindings {
			bindings[i] = TurnBinding{ProviderTurnID: b.ProviderTurnID, Binding: cloneJSON(b.Binding)}
		}
		op.TargetTurnBindings = bindings
	}
	op.Snapshot = op.Snapshot.Clone()
	op.Target = op.Target.Clone()
	for _, p := range []**time.Time{&op.DispatchedAt, &op.AcceptedAt, &op.CompletedAt, &op.AcknowledgedAt,
		&op.LeaseExpiresAt, &op.LastReconciledAt, &op.NextReconcileAt} {
		*p = clonePtr(*p)
	}
	return op
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
