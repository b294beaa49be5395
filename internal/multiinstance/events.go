package multiinstance

import (
	"context"
	"fmt"
	"time"
)

// Event is one workspaceEvents message.
type Event struct {
	Cursor              string  `json:"cursor"`
	Kind                string  `json:"kind"`
	OccurredAt          string  `json:"occurredAt"`
	SessionID           *string `json:"sessionId"`
	TurnID              *string `json:"turnId"`
	ForkOperationID     *string `json:"forkOperationId"`
	ForkOperationStatus *string `json:"forkOperationStatus"`
	ForkOperationPhase  *string `json:"forkOperationPhase"`
}

// String names the event for failure messages.
func (e Event) String() string {
	return fmt.Sprintf("%s %s s=%s t=%s op=%s %s", e.Cursor, e.Kind, deref(e.SessionID), deref(e.TurnID),
		deref(e.ForkOperationID), deref(e.ForkOperationPhase))
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

const workspaceEventsQuery = `subscription($w: ID!, $after: String) { workspaceEvents(workspaceId: $w, after: $after) {
	cursor kind occurredAt sessionId turnId forkOperationId forkOperationStatus forkOperationPhase } }`

// SubscribeEvents subscribes to workspaceEvents of workspace on wsURL, after cursor ("" for live
// only).
func SubscribeEvents(ctx context.Context, wsURL, workspace, after string) (*Stream, error) {
	vars := map[string]any{"w": workspace}
	if after != "" {
		vars["after"] = after
	}
	return Subscribe(ctx, wsURL, workspaceEventsQuery, vars)
}

// NextEvent reads the stream's next workspace event, waiting at most limit.
func (s *Stream) NextEvent(ctx context.Context, limit time.Duration) (Event, error) {
	m, err := s.Next(ctx, limit)
	if err != nil {
		return Event{}, err
	}
	var out struct{ WorkspaceEvents Event }
	if err := m.Decode(&out); err != nil {
		return Event{}, err
	}
	return out.WorkspaceEvents, nil
}

// EventsUntil reads events until stop says an event is the last one, at most limit events and
// each within idle. It returns what it read, the last event included, and an error when it
// stopped for any other reason.
func (s *Stream) EventsUntil(ctx context.Context, limit int, idle time.Duration, stop func(Event) bool) ([]Event, error) {
	var got []Event
	for len(got) < limit {
		ev, err := s.NextEvent(ctx, idle)
		if err != nil {
			return got, fmt.Errorf("after %d events: %w", len(got), err)
		}
		got = append(got, ev)
		if stop(ev) {
			return got, nil
		}
	}
	return got, fmt.Errorf("read %d events without the last one", limit)
}

// SessionUpserted matches the SESSION_UPSERTED event of session id.
func SessionUpserted(id string) func(Event) bool {
	return func(e Event) bool { return e.Kind == "SESSION_UPSERTED" && deref(e.SessionID) == id }
}

// OperationUpdate is one forkOperationUpdated message.
type OperationUpdate struct {
	Status string `json:"status"`
	Phase  string `json:"phase"`
}

const operationUpdatedQuery = `subscription($w: ID!, $id: ID!) { forkOperationUpdated(workspaceId: $w, id: $id) { status phase } }`

// FollowOperation subscribes to forkOperationUpdated and returns every phase it sends until the
// stream completes (at most 20 messages, each within idle).
func FollowOperation(ctx context.Context, s *Stream, idle time.Duration) ([]string, error) {
	var phases []string
	for range 20 {
		m, err := s.Next(ctx, idle)
		if err != nil {
			return phases, fmt.Errorf("after phases %v: %w", phases, err)
		}
		if m.Type == "complete" {
			return phases, nil
		}
		var out struct{ ForkOperationUpdated OperationUpdate }
		if err := m.Decode(&out); err != nil {
			return phases, fmt.Errorf("after phases %v: %w", phases, err)
		}
		phases = append(phases, out.ForkOperationUpdated.Phase)
	}
	return phases, fmt.Errorf("no completion after phases %v", phases)
}

// SubscribeOperation subscribes to forkOperationUpdated of operation id on wsURL.
func SubscribeOperation(ctx context.Context, wsURL, workspace, id string) (*Stream, error) {
	return Subscribe(ctx, wsURL, operationUpdatedQuery, map[string]any{"w": workspace, "id": id})
}
