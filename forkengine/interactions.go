package forkengine

import (
	"encoding/json"
	"time"
)

// InteractionKind is what a turn's interaction asks of the user: a closed set.
type InteractionKind string

// Interaction kinds.
const (
	InteractionPermission InteractionKind = "permission" // may the agent do this?
	InteractionQuestion   InteractionKind = "question"   // the agent asks the user something
)

// Valid reports whether k is one of the interaction kinds.
func (k InteractionKind) Valid() bool { return k == InteractionPermission || k == InteractionQuestion }

// InteractionState is where an interaction stands. pending moves once, to answered or
// canceled; superseded is what a fork's child makes of an interaction that was pending in the
// source (the child will never see it answered), and a runtime never reports it.
type InteractionState string

// Interaction states.
const (
	InteractionPending    InteractionState = "pending"
	InteractionAnswered   InteractionState = "answered"
	InteractionCanceled   InteractionState = "canceled"
	InteractionSuperseded InteractionState = "superseded"
)

// Valid reports whether s is one of the interaction states.
func (s InteractionState) Valid() bool {
	switch s {
	case InteractionPending, InteractionAnswered, InteractionCanceled, InteractionSuperseded:
		return true
	}
	return false
}

// Final reports whether an interaction in state s can no longer change.
func (s InteractionState) Final() bool { return s != InteractionPending }

// Interaction is a permission or question prompt of a turn, as the runtime reported it. A turn's
// interactions are keyed by the runtime's RequestID; ID is the workspace-unique id the server
// gave it (a fork's child derives its own, see forkIDs.interaction). Prompt is the prompt's JSON
// object as the runtime sent it; Answer the answer's JSON value once it is answered.
type Interaction struct {
	WorkspaceID string           `json:"workspaceId"`
	SessionID   string           `json:"sessionId"`
	TurnID      string           `json:"turnId"`
	ID          string           `json:"id"`
	RequestID   string           `json:"requestId"`
	Kind        InteractionKind  `json:"kind"`
	Prompt      json.RawMessage  `json:"prompt"`
	State       InteractionState `json:"state"`
	Answer      json.RawMessage  `json:"answer,omitempty"`
	CreatedAt   time.Time        `json:"createdAt"`
	UpdatedAt   time.Time        `json:"updatedAt"`
	AnsweredAt  *time.Time       `json:"answeredAt,omitempty"`
}

// Clone returns a copy of i that shares no bytes with it.
func (i Interaction) Clone() Interaction {
	i.Prompt, i.Answer = cloneRaw(i.Prompt), cloneRaw(i.Answer)
	if i.AnsweredAt != nil {
		at := *i.AnsweredAt
		i.AnsweredAt = &at
	}
	return i
}

func cloneRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

// FrozenInteraction is an interaction of a fork's prefix as the snapshot froze it, with the
// sequence of its turn: the child presents that turn under an id derived from the sequence, so
// the remap needs no read of the prefix at commit.
type FrozenInteraction struct {
	Sequence    int64       `json:"sequence"`
	Interaction Interaction `json:"interaction"`
}

// InteractionReport is what a runtime reports of one interaction of a turn: the whole of it as it
// stands now (a report is idempotent; the first one creates it).
type InteractionReport struct {
	WorkspaceID string
	SessionID   string
	TurnID      string
	RequestID   string
	Kind        InteractionKind
	Prompt      json.RawMessage
	State       InteractionState
	Answer      json.RawMessage
}

// MaxInteractionBytes bounds an interaction's prompt and its answer, each.
const MaxInteractionBytes = 64 << 10
