package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// The dataset, the same shape as the anchor's in-memory page: workspace demo, session s0 with
// three settled turns bound to the simulated provider (two messages each), and 99 forks of s0
// through its third turn (s1..s99), each committed and acknowledged. Every session's latest
// turn is settled and bound, so its providerForkBindingAvailable probes the driver.
const (
	workspace = "demo"
	forks     = 99
)

type api struct{ url string }

func (a *api) do(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	resp, err := post(ctx, http.DefaultClient, a.url, body)
	if err != nil {
		return err
	}
	var envelope struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.Unmarshal(resp, &envelope); err != nil {
		return fmt.Errorf("decode %.200s: %w", resp, err)
	}
	if len(envelope.Errors) > 0 {
		return fmt.Errorf("graphql: %s", envelope.Errors[0].Message)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(bytes.NewReader(envelope.Data)).Decode(out)
}

func seed(ctx context.Context, a *api) error {
	if err := a.do(ctx, `mutation($w: ID!) { reportSession(input: {workspaceId: $w, id: "s0",
		provider: "simulated", providerSessionId: "sim-s0", title: "Session 0"}) { id } }`,
		map[string]any{"w": workspace}, nil); err != nil {
		return fmt.Errorf("report s0: %w", err)
	}
	for i := 1; i <= 3; i++ {
		turn := fmt.Sprintf("s0-t%d", i)
		if err := a.do(ctx, `mutation($w: ID!, $t: ID!, $p: String!, $b: JSON!) { reportTurn(input: {workspaceId: $w,
			sessionId: "s0", id: $t, phase: SETTLED, outcome: COMPLETED, providerTurnId: $p, providerTurnBinding: $b}) { id } }`,
			map[string]any{"w": workspace, "t": turn, "p": "sim-" + turn, "b": map[string]int{"turn": i}}, nil); err != nil {
			return fmt.Errorf("report %s: %w", turn, err)
		}
		if err := a.do(ctx, `mutation($w: ID!, $t: ID!, $q: String!, $r: String!) { appendMessages(input: {workspaceId: $w,
			sessionId: "s0", turnId: $t, messages: [{role: USER, content: $q}, {role: ASSISTANT, content: $r}]}) { id } }`,
			map[string]any{"w": workspace, "t": turn, "q": fmt.Sprintf("question %d", i), "r": fmt.Sprintf("answer %d", i)}, nil); err != nil {
			return fmt.Errorf("messages of %s: %w", turn, err)
		}
	}
	for i := 1; i <= forks; i++ {
		if err := forkOnce(ctx, a, i); err != nil {
			return err
		}
	}
	return nil
}

// forkOnce forks s0 through s0-t3 into s<i>, waits for the commit and acknowledges it (a
// committed, unacknowledged fork through the same turn would be returned to the next request).
func forkOnce(ctx context.Context, a *api, i int) error {
	var started struct{ ForkSession struct{ ID string } }
	if err := a.do(ctx, `mutation($w: ID!, $r: ID!, $s: ID!) { forkSession(input: {workspaceId: $w,
		sourceSessionId: "s0", throughTurnId: "s0-t3", requestId: $r, targetSessionId: $s}) { id } }`,
		map[string]any{"w": workspace, "r": fmt.Sprintf("fork-%d", i), "s": fmt.Sprintf("s%d", i)}, &started); err != nil {
		return fmt.Errorf("fork %d: %w", i, err)
	}
	id := started.ForkSession.ID
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got struct{ ForkOperation struct{ Status string } }
		if err := a.do(ctx, `query($w: ID!, $id: ID!) { forkOperation(workspaceId: $w, id: $id) { status } }`,
			map[string]any{"w": workspace, "id": id}, &got); err != nil {
			return fmt.Errorf("poll fork %s: %w", id, err)
		}
		switch got.ForkOperation.Status {
		case "COMMITTED":
			return a.do(ctx, `mutation($w: ID!, $id: ID!) { acknowledgeForkOperation(workspaceId: $w, id: $id) { id } }`,
				map[string]any{"w": workspace, "id": id}, nil)
		case "FAILED", "UNKNOWN":
			return fmt.Errorf("fork %s ended %s", id, got.ForkOperation.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fork %s not committed within 30s", id)
		}
		time.Sleep(5 * time.Millisecond) // the server commits in the background; poll with a deadline
	}
}
