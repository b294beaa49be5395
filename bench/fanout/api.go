package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// apiClient sends mutations over HTTP POST.
type apiClient struct {
	base string
}

const sourceSession = "fanout-source"

func (a *apiClient) do(ctx context.Context, query string, vars map[string]any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("post: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("decode response (HTTP %d): %w", resp.StatusCode, err)
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("graphql: %s", out.Errors[0].Message)
	}
	return nil
}

func (a *apiClient) reportSession(ctx context.Context, ws, id string) error {
	return a.do(ctx, `mutation($ws: ID!, $id: ID!, $p: String!) { reportSession(input: {workspaceId: $ws, id: $id,
		provider: "simulated", providerSessionId: $p}) { id } }`, map[string]any{"ws": ws, "id": id, "p": "p-" + id})
}

func (a *apiClient) reportTurn(ctx context.Context, ws, session, id string) error {
	return a.do(ctx, `mutation($ws: ID!, $s: ID!, $id: ID!, $p: String!) { reportTurn(input: {workspaceId: $ws,
		sessionId: $s, id: $id, phase: SETTLED, outcome: COMPLETED, providerTurnId: $p, providerTurnBinding: {n: 1}}) { id } }`,
		map[string]any{"ws": ws, "s": session, "id": id, "p": "p-" + id})
}

func (a *apiClient) fork(ctx context.Context, ws, source, turn, request string) error {
	return a.do(ctx, `mutation($ws: ID!, $s: ID!, $t: ID!, $r: ID!) { forkSession(input: {workspaceId: $ws,
		sourceSessionId: $s, throughTurnId: $t, requestId: $r}) { id } }`,
		map[string]any{"ws": ws, "s": source, "t": turn, "r": request})
}

// seedSource reports the session every turn and fork of the run belongs to.
func (a *apiClient) seedSource(ctx context.Context, ws string) error {
	if err := a.reportSession(ctx, ws, sourceSession); err != nil {
		return fmt.Errorf("seed source session: %w", err)
	}
	return nil
}

// driven summarises the load the driver produced.
type driven struct {
	mutations int
	wall      time.Duration
	serverCPU float64 // CPU seconds the server spent while the load ran and was delivered
	clientCPU float64 // CPU seconds this program's subscribers and driver spent meanwhile
}

// drive reports o.turns turns at o.rate mutations per second and, spread among them, o.forks
// fork cycles: each reports a small source session with three settled turns and forks it
// through its second turn, the way an agent runtime and a user would. Then it reports the end
// marker once the forks have had time to commit.
func (a *apiClient) drive(ctx context.Context, ws string, o options) (driven, error) {
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / o.rate))
	defer tick.Stop()
	every := o.turns + 1
	if o.forks > 0 {
		every = max(1, o.turns/o.forks)
	}
	n, forks := 0, 0
	for i := 1; i <= o.turns; i++ {
		<-tick.C
		turn := fmt.Sprintf("turn-%d", i)
		if err := a.reportTurn(ctx, ws, sourceSession, turn); err != nil {
			return driven{}, fmt.Errorf("report %s: %w", turn, err)
		}
		n++
		if i%every == 0 && forks < o.forks {
			forks++
			made, err := a.forkCycle(ctx, ws, forks, tick.C)
			n += made
			if err != nil {
				return driven{}, err
			}
		}
	}
	time.Sleep(2 * time.Second) // forks commit in the background
	if err := a.reportSession(ctx, ws, "mark-end"); err != nil {
		return driven{}, err
	}
	return driven{mutations: n + 1, wall: time.Since(start)}, nil
}

// forkCycle reports source session k with three settled turns and forks it through the second.
func (a *apiClient) forkCycle(ctx context.Context, ws string, k int, tick <-chan time.Time) (int, error) {
	source := fmt.Sprintf("source-%d", k)
	<-tick
	if err := a.reportSession(ctx, ws, source); err != nil {
		return 0, fmt.Errorf("report %s: %w", source, err)
	}
	for t := 1; t <= 3; t++ {
		<-tick
		if err := a.reportTurn(ctx, ws, source, fmt.Sprintf("%s-t%d", source, t)); err != nil {
			return t, fmt.Errorf("report turn of %s: %w", source, err)
		}
	}
	<-tick
	if err := a.fork(ctx, ws, source, source+"-t2", fmt.Sprintf("req-%d", k)); err != nil {
		return 4, fmt.Errorf("fork %s: %w", source, err)
	}
	return 5, nil
}
