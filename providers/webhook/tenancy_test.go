package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// Every request of the protocol names the workspace it is for at its top level, so an adapter can
// check that the provider session it is asked about belongs to the caller; /fork and /reconcile
// also carry requestedBy, the subject who asked for the fork ("" in open mode).
func TestEveryRequestNamesItsWorkspace(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string][]map[string]any{}
	d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		bodies[r.URL.Path] = append(bodies[r.URL.Path], body)
		mu.Unlock()
		switch r.URL.Path {
		case "/adapter/describe":
			reply(w, 200, `{"kind":"k","version":"1","stateBindingMode":"host_copy","throughTurn":true}`)
		case "/adapter/probe":
			probes, _ := body["probes"].([]any)
			answers, _ := json.Marshal(map[string][]bool{"forkable": make([]bool, len(probes))})
			reply(w, 200, string(answers))
		case "/adapter/fork":
			reply(w, 200, `{"disposition":"accepted","providerSessionId":"child"}`)
		default:
			reply(w, 200, `{"answer":"unknown"}`)
		}
	})
	ctx := context.Background()
	if _, err := d.Describe(ctx, sourceSession()); err != nil {
		t.Fatal(err)
	}
	req := forkRequest()
	req.RequestedBy = "user:ada"
	if _, err := d.Fork(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reconcile(ctx, forkengine.ReconcileRequest{ForkRequest: req, Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"/adapter/describe": "ws", "/adapter/fork": "ws", "/adapter/reconcile": "ws"} {
		if len(bodies[path]) != 1 || bodies[path][0]["workspaceId"] != want {
			t.Fatalf("%s received %v, want workspaceId %q at the top level", path, bodies[path], want)
		}
	}
	for _, path := range []string{"/adapter/fork", "/adapter/reconcile"} {
		if got := bodies[path][0]["requestedBy"]; got != "user:ada" {
			t.Fatalf("%s received requestedBy %v, want the fork's subject", path, got)
		}
	}
}

// A probe batch that mixes workspaces (a caller allowed several) goes as one /probe request per
// workspace, each naming it, so no request asks about another tenant's sessions; the answers
// come back in the batch's order.
func TestProbeBatchIsOneRequestPerWorkspace(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			WorkspaceID string `json:"workspaceId"`
			Probes      []struct {
				Session struct {
					WorkspaceID string `json:"workspaceId"`
				} `json:"session"`
				Turn struct {
					Sequence int64 `json:"sequence"`
				} `json:"turn"`
			} `json:"probes"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		answers := make([]bool, len(body.Probes))
		for i, p := range body.Probes {
			if p.Session.WorkspaceID != body.WorkspaceID {
				t.Errorf("a /probe for %q carries a session of %q", body.WorkspaceID, p.Session.WorkspaceID)
			}
			answers[i] = p.Turn.Sequence%2 == 1
		}
		mu.Lock()
		seen = append(seen, body.WorkspaceID)
		mu.Unlock()
		out, _ := json.Marshal(map[string][]bool{"forkable": answers})
		reply(w, 200, string(out))
	})
	var probes []forkengine.Probe
	for i, ws := range []string{"a", "b", "a", "b", "a"} {
		s := sourceSession()
		s.WorkspaceID = ws
		turn := boundTurn("t", int64(i+1))
		turn.WorkspaceID = ws
		probes = append(probes, forkengine.Probe{Session: s, Turn: turn})
	}
	got, err := d.ProbeTurns(context.Background(), probes)
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range got {
		if ok != (probes[i].Turn.Sequence%2 == 1) {
			t.Fatalf("answer %d = %v: answers out of the batch's order (%v)", i, ok, got)
		}
	}
	if len(seen) != 2 || seen[0] != "a" || seen[1] != "b" {
		t.Fatalf("/probe requests for workspaces %v, want one for a, then one for b", seen)
	}
}
