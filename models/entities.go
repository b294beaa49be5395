package models

import (
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Session is the API view of a forkengine.Session. Relations (turns, latestTurn, forks, ...) are
// resolved through loaders from the domain value kept beside the view.
type Session struct {
	// LocalID is the id unique in the workspace (the runtime's own); ID() is the global one.
	LocalID           string
	WorkspaceID       string
	Kind              SessionKind
	Provider          string
	ProviderSessionID *string
	Title             string
	RailSectionKey    *string
	RailProjectPath   *string
	Cwd               *string
	Model             *string
	Settings          JSON
	Metadata          JSON // null when empty (MarshalGQL)
	RuntimeContext    JSON // null when empty
	Visible           bool
	CreatedAt         time.Time
	UpdatedAt         time.Time
	DeletedAt         *time.Time

	domain forkengine.Session
	rel    Relations
}

// Domain returns the session the view was built from.
func (s *Session) Domain() forkengine.Session { return s.domain }

// SessionFrom builds the API view of a session whose relations rel resolves.
//
// The optional strings point into the view's own copy of the domain value (optionalIn): one
// allocation per session of a page instead of up to six.
func SessionFrom(s forkengine.Session, rel Relations) *Session {
	view := new(Session)
	sessionInto(view, s, rel)
	return view
}

// sessionInto builds the view of s in view (SessionFrom; a page builds its views in one array).
func sessionInto(view *Session, s forkengine.Session, rel Relations) {
	*view = Session{
		LocalID: s.ID, WorkspaceID: s.WorkspaceID, Kind: wire[SessionKind](s.Kind), Provider: s.Provider,
		Title: s.Title, Settings: JSON(s.Settings), Metadata: JSON(s.Metadata),
		RuntimeContext: JSON(s.RuntimeContext), Visible: s.Visible,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, DeletedAt: s.DeletedAt,
		domain: s, rel: orUnbound(rel),
	}
	d := &view.domain
	view.ProviderSessionID, view.RailSectionKey = optionalIn(&d.ProviderSessionID), optionalIn(&d.RailSectionKey)
	view.Cwd, view.Model = optionalIn(&d.Cwd), optionalIn(&d.Model)
	view.RailProjectPath = optionalIn(&d.RailProjectPath)
}

// Turn is the API view of a forkengine.Turn. The provider binding stays internal: clients see
// only the forkability it implies.
type Turn struct {
	// LocalID is the id unique in the workspace (the runtime's own); ID() is the global one.
	LocalID     string
	WorkspaceID string
	SessionID   string
	Sequence    int64
	Phase       TurnPhase
	Outcome     *TurnOutcome
	Origin      *TurnOrigin
	// Error, FileChanges and CompletedCommand are the turn's reported details.
	Error            *TurnError
	FileChanges      []*FileChange
	CompletedCommand *CompletedCommand
	StartedAt        time.Time
	SettledAt        *time.Time
	UpdatedAt        time.Time

	domain  forkengine.Turn
	outcome TurnOutcome // what Outcome points to
	rel     Relations
}

// Domain returns the turn the view was built from.
func (t *Turn) Domain() forkengine.Turn { return t.domain }

// TurnFrom builds the API view of a turn whose relations rel resolves.
// Like SessionFrom's, its pointers point into the view: one allocation per turn.
func TurnFrom(t forkengine.Turn, rel Relations) *Turn {
	view := &Turn{
		LocalID: t.ID, WorkspaceID: t.WorkspaceID, SessionID: t.SessionID, Sequence: t.Sequence, Phase: wire[TurnPhase](t.Phase),
		StartedAt: t.StartedAt, SettledAt: t.SettledAt,
		UpdatedAt: t.UpdatedAt, domain: t, rel: orUnbound(rel),
	}
	if o := t.OriginKind(); o != "" {
		origin := wire[TurnOrigin](o)
		view.Origin = &origin
	}
	view.Error, view.FileChanges, view.CompletedCommand = turnDetailsFrom(t)
	if t.Outcome != "" {
		view.outcome = wire[TurnOutcome](t.Outcome)
		view.Outcome = &view.outcome
	}
	return view
}

// TurnsFrom builds the API views of turns, keeping their order.
func TurnsFrom(ts []forkengine.Turn, rel Relations) []*Turn {
	out := make([]*Turn, len(ts))
	for i, t := range ts {
		out[i] = TurnFrom(t, rel)
	}
	return out
}

// Message is the API view of a forkengine.Message.
type Message struct {
	// LocalID is the id unique in the workspace; ID() is the global one.
	LocalID     string
	WorkspaceID string
	TurnID      string
	SessionID   string
	Role        MessageRole
	Content     string
	// Parts are the typed parts (a plain message's one TextPart).
	Parts     []MessagePart
	CreatedAt time.Time
}

// MessagesFrom builds the API views of messages, keeping their order. The views share one array:
// two allocations per list, not one per message more.
func MessagesFrom(ms []forkengine.Message) []*Message {
	views := make([]Message, len(ms))
	out := make([]*Message, len(ms))
	for i, m := range ms {
		views[i] = Message{
			LocalID: m.ID, WorkspaceID: m.WorkspaceID, TurnID: m.TurnID, SessionID: m.SessionID, Role: wire[MessageRole](m.Role),
			Content: m.Content, Parts: partsFrom(m), CreatedAt: m.CreatedAt,
		}
		out[i] = &views[i]
	}
	return out
}

// ForkOperation is the API view of a forkengine.ForkOperation: the public status and phase, never
// the provider binding or snapshot.
type ForkOperation struct {
	// LocalID is the operation id unique in the workspace (the server's); ID() is the global one.
	LocalID         string
	WorkspaceID     string
	RequestID       string
	SourceSessionID string
	TargetSessionID string
	ThroughTurnID   string
	TargetTurnID    *string
	Status          ForkOperationStatus
	Phase           ForkOperationPhase
	Error           *string
	ErrorReason     *string
	Provider        string
	// ReconcileAttempts, LastReconciledAt and NextReconcileAt: see forkengine.ForkOperation.
	ReconcileAttempts int
	LastReconciledAt  *time.Time
	NextReconcileAt   *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	AcknowledgedAt    *time.Time
	// RequestedBy and AcknowledgedBy name the subjects who asked and who acknowledged; nil when
	// unknown.
	RequestedBy    *string
	AcknowledgedBy *string
	// Target is the frozen target (forkengine.ForkOperation.Target); nil when none was frozen.
	Target *ForkTarget

	domain forkengine.ForkOperation
}

// Domain returns the operation the view was built from.
func (op *ForkOperation) Domain() forkengine.ForkOperation { return op.domain }

// ForkOperationFrom builds the API view of an operation.
func ForkOperationFrom(op forkengine.ForkOperation) *ForkOperation {
	status, phase := PublicStatus(op.Status)
	return &ForkOperation{
		LocalID: op.ID, WorkspaceID: op.WorkspaceID, RequestID: op.RequestID,
		SourceSessionID: op.SourceSessionID, TargetSessionID: op.TargetSessionID,
		ThroughTurnID: op.ThroughTurnID, TargetTurnID: optional(op.TargetTurnID),
		Status: status, Phase: phase, Error: optional(op.Error), Provider: op.Provider,
		CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt, AcknowledgedAt: op.AcknowledgedAt,
		ErrorReason: optional(op.ErrorReason), ReconcileAttempts: op.ReconcileAttempts,
		LastReconciledAt: op.LastReconciledAt, NextReconcileAt: op.NextReconcileAt,
		RequestedBy: optional(op.RequestedBy), AcknowledgedBy: optional(op.AcknowledgedBy),
		Target: forkTargetFrom(op.Target), domain: op,
	}
}

func forkTargetFrom(t *forkengine.ForkTarget) *ForkTarget {
	if t == nil {
		return nil
	}
	return &ForkTarget{Settings: JSON(t.Settings), Model: optional(t.Model), Cwd: optional(t.Cwd),
		RuntimeContext: JSON(t.PreparedContext)}
}

// Lineage is the API view of a forkengine.Lineage.
type Lineage struct {
	OperationID     string
	SourceSessionID string
	SourceTurnID    string
	TargetSessionID string
	TargetTurnID    string
	ForkedAt        time.Time

	// WorkspaceID scopes the loaders that resolve the lineage's sessions and turns.
	WorkspaceID string

	rel Relations
}

// LineageFrom builds the API view of a lineage whose relations rel resolves.
func LineageFrom(l forkengine.Lineage, rel Relations) *Lineage {
	return &Lineage{
		OperationID: l.OperationID, SourceSessionID: l.SourceSessionID, SourceTurnID: l.SourceTurnID,
		TargetSessionID: l.TargetSessionID, TargetTurnID: l.TargetTurnID, ForkedAt: l.ForkedAt,
		WorkspaceID: l.WorkspaceID, rel: orUnbound(rel),
	}
}

// LineagesFrom builds the API views of lineages, keeping their order.
func LineagesFrom(ls []forkengine.Lineage, rel Relations) []*Lineage {
	out := make([]*Lineage, len(ls))
	for i, l := range ls {
		out[i] = LineageFrom(l, rel)
	}
	return out
}

// optional maps the domain's "empty means absent" strings to GraphQL nulls.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optionalIn is optional for a string the view holds (in its copy of the domain value): the
// pointer is into the view, so it costs no allocation. Views are never changed once built.
func optionalIn(s *string) *string {
	if *s == "" {
		return nil
	}
	return s
}
