package models

import (
	"fmt"
	"io"
	"strconv"
)

// MessageRole and TurnPhase are written by hand (autobind binds them in place of generated
// enums) for their MarshalGQL: the generated one quotes with strconv.Quote and writes with
// fmt.Fprint, two allocations per value, and a list query writes a role per message and a phase
// per turn (300 for a page of 100). These write a quoted constant. Their values must be the
// schema's: TestHandWrittenEnumsMatchSchema compares them.

// Who wrote a message.
type MessageRole string

const (
	// The person using the agent.
	MessageRoleUser MessageRole = "USER"
	// The agent.
	MessageRoleAssistant MessageRole = "ASSISTANT"
	// A tool call or its result.
	MessageRoleTool MessageRole = "TOOL"
	// A system or developer instruction.
	MessageRoleSystem MessageRole = "SYSTEM"
)

// AllMessageRole lists every MessageRole, in schema order.
var AllMessageRole = []MessageRole{MessageRoleUser, MessageRoleAssistant, MessageRoleTool, MessageRoleSystem}

// IsValid reports whether e is one of the schema's values.
func (e MessageRole) IsValid() bool {
	switch e {
	case MessageRoleUser, MessageRoleAssistant, MessageRoleTool, MessageRoleSystem:
		return true
	}
	return false
}

// String returns the value as the schema spells it.
func (e MessageRole) String() string { return string(e) }

// UnmarshalGQL accepts one of the schema's values (a string).
func (e *MessageRole) UnmarshalGQL(v any) error { return unmarshalEnum(e, v, "MessageRole") }

// MarshalGQL writes the value as a JSON string.
func (e MessageRole) MarshalGQL(w io.Writer) { writeEnum(w, string(e)) }

// UnmarshalJSON reads a JSON string holding one of the schema's values.
func (e *MessageRole) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(e, b) }

// MarshalJSON writes the value as a JSON string.
func (e MessageRole) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(string(e))), nil }

// Where a turn is in its life. Phases only move forward, in this order.
type TurnPhase string

const (
	// The prompt was submitted.
	TurnPhaseSubmitted TurnPhase = "SUBMITTED"
	// The agent is working.
	TurnPhaseRunning TurnPhase = "RUNNING"
	// The agent waits for input (an approval, a question).
	TurnPhaseWaiting TurnPhase = "WAITING"
	// The agent finished and the turn is being finalised.
	TurnPhaseSettling TurnPhase = "SETTLING"
	// The turn is finished; it has an outcome and can be a fork boundary.
	TurnPhaseSettled TurnPhase = "SETTLED"
)

// AllTurnPhase lists every TurnPhase, in schema order.
var AllTurnPhase = []TurnPhase{TurnPhaseSubmitted, TurnPhaseRunning, TurnPhaseWaiting, TurnPhaseSettling, TurnPhaseSettled}

// IsValid reports whether e is one of the schema's values.
func (e TurnPhase) IsValid() bool {
	switch e {
	case TurnPhaseSubmitted, TurnPhaseRunning, TurnPhaseWaiting, TurnPhaseSettling, TurnPhaseSettled:
		return true
	}
	return false
}

// String returns the value as the schema spells it.
func (e TurnPhase) String() string { return string(e) }

// UnmarshalGQL accepts one of the schema's values (a string).
func (e *TurnPhase) UnmarshalGQL(v any) error { return unmarshalEnum(e, v, "TurnPhase") }

// MarshalGQL writes the value as a JSON string.
func (e TurnPhase) MarshalGQL(w io.Writer) { writeEnum(w, string(e)) }

// UnmarshalJSON reads a JSON string holding one of the schema's values.
func (e *TurnPhase) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(e, b) }

// MarshalJSON writes the value as a JSON string.
func (e TurnPhase) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(string(e))), nil }

// unmarshalEnumJSON reads a JSON string into e as UnmarshalGQL would take it.
func unmarshalEnumJSON(e interface{ UnmarshalGQL(any) error }, b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	return e.UnmarshalGQL(s)
}

func unmarshalEnum[E interface {
	~string
	IsValid() bool
}](e *E, v any, name string) error {
	str, ok := v.(string)
	if !ok {
		return fmt.Errorf("enums must be strings")
	}
	*e = E(str)
	if !(*e).IsValid() {
		return fmt.Errorf("%s is not a valid %s", str, name)
	}
	return nil
}

// quotedEnums holds each value of the hand-written enums as a JSON string.
var quotedEnums = func() map[string]string {
	quoted := map[string]string{}
	for _, v := range AllMessageRole {
		quoted[string(v)] = strconv.Quote(string(v))
	}
	for _, v := range AllTurnPhase {
		quoted[string(v)] = strconv.Quote(string(v))
	}
	return quoted
}()

// writeEnum writes v quoted: a constant for the schema's values.
func writeEnum(w io.Writer, v string) {
	q, ok := quotedEnums[v]
	if !ok {
		q = strconv.Quote(v)
	}
	_, _ = io.WriteString(w, q)
}
