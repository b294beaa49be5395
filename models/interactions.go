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
