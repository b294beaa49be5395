package multiinstance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Operation is the part of a ForkOperation the tests read.
type Operation struct {
	ID              string  `json:"id"`
	RequestID       string  `json:"requestId"`
	Status          string  `json:"status"`
	Phase           string  `json:"phase"`
	TargetSessionID string  `json:"targetSessionId"`
	Error           *string `json:"error"`
}

const operationFields = "id: localId requestId status phase targetSessionId error" // the local id: the one events, the adapter and the database name

// Terminal reports whether the operation's status is final (COMMITTED, FAILED or UNKNOWN).
func (o Operation) Terminal() bool {
	return o.Status == "COMMITTED" || o.Status == "FAILED" || o.Status == "UNKNOWN"
}

// ReportSession reports a root session of provider (simulated or webhook) with settings (a JSON
// object, or "" for none).
func (c *Client) ReportSession(ctx context.Context, workspace, id, provider, settings string) error {
	vars := map[string]any{"input": map[string]any{
		"workspaceId": workspace, "id": id, "provider": provider, "providerSessionId": "p-" + id, "title": id,
	}}
	if settings != "" {
		vars["input"].(map[string]any)["settings"] = rawJSON(settings)
	}
	return c.Do(ctx, `mutation($input: ReportSessionInput!) { reportSession(input: $input) { id } }`, vars, nil)
}

// ReportSettledTurn reports a settled, completed turn bound to a provider turn, so it can be
// forked through.
func (c *Client) ReportSettledTurn(ctx context.Context, workspace, session, id string) error {
	vars := map[string]any{"input": map[string]any{
		"workspaceId": workspace, "sessionId": session, "id": id, "phase": "SETTLED", "outcome": "COMPLETED",
		"providerTurnId": "p-" + id, "providerTurnBinding": map[string]any{"turn": id},
	}}
	return c.Do(ctx, `mutation($input: ReportTurnInput!) { reportTurn(input: $input) { id } }`, vars, nil)
}

// ReportSource reports a session with turns settled turns named <id>-t1 … <id>-tN.
func (c *Client) ReportSource(ctx context.Context, workspace, id, provider, settings string, turns int) error {
	if err := c.ReportSession(ctx, workspace, id, provider, settings); err != nil {
		return fmt.Errorf("report session %s: %w", id, err)
	}
	for i := 1; i <= turns; i++ {
		if err := c.ReportSettledTurn(ctx, workspace, id, fmt.Sprintf("%s-t%d", id, i)); err != nil {
			return fmt.Errorf("report turn %d of %s: %w", i, id, err)
		}
	}
	return nil
}

// Fork asks for a fork of source through turn with requestID.
func (c *Client) Fork(ctx context.Context, workspace, source, turn, requestID string) (Operation, error) {
	var out struct{ ForkSession Operation }
	err := c.Do(ctx, `mutation($input: ForkSessionInput!) { forkSession(input: $input) { `+operationFields+` } }`,
		map[string]any{"input": map[string]any{
			"workspaceId": workspace, "sourceSessionId": source, "throughTurnId": turn, "requestId": requestID,
		}}, &out)
	return out.ForkSession, err
}

// Operation reads one fork operation; found is false when it does not exist.
func (c *Client) Operation(ctx context.Context, workspace, id string) (op Operation, found bool, err error) {
	var out struct{ ForkOperation *Operation }
	err = c.Do(ctx, `query($w: ID!, $id: ID!) { forkOperation(workspaceId: $w, id: $id) { `+operationFields+` } }`,
		map[string]any{"w": workspace, "id": id}, &out)
	if err != nil || out.ForkOperation == nil {
		return Operation{}, false, err
	}
	return *out.ForkOperation, true, nil
}

// Operations lists up to 200 fork operations of a workspace through one boundary turn.
func (c *Client) Operations(ctx context.Context, workspace, throughTurn string) ([]Operation, error) {
	var out struct {
		ForkOperations struct{ Edges []struct{ Node Operation } }
	}
	err := c.Do(ctx, `query($w: ID!, $t: ID!) { forkOperations(workspaceId: $w, first: 200, filter: {throughTurnId: $t}) {
		edges { node { `+operationFields+` } } } }`, map[string]any{"w": workspace, "t": throughTurn}, &out)
	ops := make([]Operation, len(out.ForkOperations.Edges))
	for i, e := range out.ForkOperations.Edges {
		ops[i] = e.Node
	}
	return ops, err
}

// maxPolls bounds every polling loop in count as well as in time.
const maxPolls = 10000

// AwaitOperation polls the operation until done says yes, at most for limit.
func (c *Client) AwaitOperation(ctx context.Context, workspace, id string, limit time.Duration, done func(Operation) bool) (Operation, error) {
	deadline := time.Now().Add(limit)
	var last Operation
	for poll := 0; ; poll++ {
		op, found, err := c.Operation(ctx, workspace, id)
		if err == nil && found {
			last = op
			if done(op) {
				return op, nil
			}
		}
		if time.Now().After(deadline) || poll >= maxPolls {
			return last, fmt.Errorf("operation %s not as awaited within %s (%d polls): last %+v, last error %v", id, limit, poll+1, last, err)
		}
		// Polling the API, bounded by the deadline; a done ctx ends the wait at once (a caller
		// that stops its load after killing the instance must not wait out the limit).
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("operation %s not as awaited: %w (%d polls): last %+v, last error %v", id, ctx.Err(), poll+1, last, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// EventCursor reads workspaceEventCursor: the position a snapshot-then-subscribe client resumes
// after.
func (c *Client) EventCursor(ctx context.Context, workspace string) (string, error) {
	var out struct{ WorkspaceEventCursor string }
	err := c.Do(ctx, `query($w: ID!) { workspaceEventCursor(workspaceId: $w) }`, map[string]any{"w": workspace}, &out)
	return out.WorkspaceEventCursor, err
}

// rawJSON decodes a JSON text for use as a variable; a malformed text is passed as a string,
// which the server refuses.
func rawJSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	return v
}
