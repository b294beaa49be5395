package models

import (
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Interaction is the API view of a forkengine.Interaction.
type Interaction struct {
	// LocalID is the id unique in the workspace; ID() is the global one.
	LocalID     string
	WorkspaceID string
	RequestID   string
	TurnID      string
	SessionID   string
	Kind        InteractionKind
	Prompt      JSON
	State       InteractionState
	Answer      JSON
	CreatedAt   time.Time
	UpdatedAt   time.Time
	AnsweredAt  *time.Time
}

// IsNode marks Interaction as a Node.
func (*Interaction) IsNode() {}

// ID is the interaction's global id.
func (i *Interaction) ID() string { return GlobalID(NodeInteraction, i.WorkspaceID, i.LocalID) }

// InteractionFrom builds the API view of an interaction.
func InteractionFrom(i forkengine.Interaction) *Interaction {
	return &Interaction{LocalID: i.ID, WorkspaceID: i.WorkspaceID, RequestID: i.RequestID, TurnID: i.TurnID,
		SessionID: i.SessionID, Kind: wire[InteractionKind](i.Kind), Prompt: JSON(i.Prompt),
		State: wire[InteractionState](i.State), Answer: JSON(i.Answer), CreatedAt: i.CreatedAt,
		UpdatedAt: i.UpdatedAt, AnsweredAt: i.AnsweredAt}
}

// InteractionsFrom builds the API views of interactions, keeping their order.
func InteractionsFrom(is []forkengine.Interaction) []*Interaction {
	out := make([]*Interaction, len(is))
	for i, it := range is {
		out[i] = InteractionFrom(it)
	}
	return out
}

// Domain returns the engine's report of the interaction.
func (in ReportInteractionInput) Domain() forkengine.InteractionReport {
	return forkengine.InteractionReport{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, TurnID: in.TurnID,
		RequestID: in.RequestID, Kind: domain[forkengine.InteractionKind](in.Kind), Prompt: rawOrNil(in.Prompt),
		State: domain[forkengine.InteractionState](in.State), Answer: rawOrNil(in.Answer)}
}

// Workspace names the workspace an input writes to, for authorization.
func (in ReportInteractionInput) Workspace() string { return in.WorkspaceID }

// AuditMessage is the API view of a forkengine.AuditMessage.
type AuditMessage struct {
	// LocalID is the id unique in the workspace; ID() is the global one.
	LocalID       string
	WorkspaceID   string
	SessionID     string
	AfterSequence int64
	Kind          string
	Content       string
	CreatedAt     time.Time
}

// IsNode marks AuditMessage as a Node.
func (*AuditMessage) IsNode() {}

// ID is the audit message's global id.
func (m *AuditMessage) ID() string { return GlobalID(NodeAuditMessage, m.WorkspaceID, m.LocalID) }

// AuditMessageFrom builds the API view of an audit message.
func AuditMessageFrom(m forkengine.AuditMessage) *AuditMessage {
	return &AuditMessage{LocalID: m.ID, WorkspaceID: m.WorkspaceID, SessionID: m.SessionID,
		AfterSequence: m.AfterSequence, Kind: m.Kind, Content: m.Content, CreatedAt: m.CreatedAt}
}

// AuditMessagesFrom builds the API views of audit messages, keeping their order.
func AuditMessagesFrom(ms []forkengine.AuditMessage) []*AuditMessage {
	out := make([]*AuditMessage, len(ms))
	for i, m := range ms {
		out[i] = AuditMessageFrom(m)
	}
	return out
}

// Domain returns the engine's report of the audit message.
func (in ReportAuditMessageInput) Domain() forkengine.AuditReport {
	r := forkengine.AuditReport{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, Kind: in.Kind, Content: in.Content}
	if in.ID != nil {
		r.ID = *in.ID
	}
	return r
}

// Workspace names the workspace an input writes to, for authorization.
func (in ReportAuditMessageInput) Workspace() string { return in.WorkspaceID }
