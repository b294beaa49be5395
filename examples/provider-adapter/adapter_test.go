package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestDescribePromisesReconcile(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	var got descriptor
	status := ta.post(t, "/describe", describeRequest{Session: forkOf("r").Source}, &got)
	want := descriptor{Kind: "reference-adapter", Version: "1", StateBindingMode: hostCopy, ThroughTurn: true, Reconcile: true,
		RecoverBinding: true}
	if status != http.StatusOK || got != want {
		t.Fatalf("describe = %d %+v, want 200 %+v", status, got, want)
	}
}

// TestProbeAnswersTheBatchInOrder: one request, one answer per probe, in order.
func TestProbeAnswersTheBatchInOrder(t *testing.T) {
	source := forkOf("r").Source
	running := boundTurn("t3", 3)
	running.Phase = "running"
	noTurnID := boundTurn("t4", 4)
	noTurnID.ProviderTurnID = ""
	nullBinding := boundTurn("t5", 5)
	nullBinding.ProviderTurnBinding = json.RawMessage(`null`)
	arrayBinding := boundTurn("t6", 6)
	arrayBinding.ProviderTurnBinding = json.RawMessage(`[1]`)
	cases := []struct {
		session wireSession
		turn    wireTurn
		want    bool
	}{
		{source, boundTurn("t1", 1), true},
		{source, running, false},
		{source, noTurnID, false},
		{source, nullBinding, false},
		{source, arrayBinding, false},
		{wireSession{ID: "no-provider-session"}, boundTurn("t2", 2), false},
		{source, boundTurn("t2", 2), true},
	}
	var req probeRequest
	for _, c := range cases {
		req.Probes = append(req.Probes, struct {
			Session wireSession `json:"session"`
			Turn    wireTurn    `json:"turn"`
		}{c.session, c.turn})
	}
	ta := newTestAdapter(t, "", 0)
	var got probeResponse
	if status := ta.post(t, "/probe", req, &got); status != http.StatusOK || len(got.Forkable) != len(cases) {
		t.Fatalf("probe = %d %v, want 200 with %d answers", status, got.Forkable, len(cases))
	}
	for i, c := range cases {
		if got.Forkable[i] != c.want {
			t.Fatalf("probe %d (turn %s) = %v, want %v", i, c.turn.ID, got.Forkable[i], c.want)
		}
	}
}

// TestForkIsIdempotentOnRequestID: a repeated /fork gets the same child, and only one exists.
func TestForkIsIdempotentOnRequestID(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	_, first := ta.fork(t, forkOf("r1"))
	status, again := ta.fork(t, forkOf("r1"))
	if status != http.StatusOK || first.Disposition != dispositionAccepted || again != first {
		t.Fatalf("fork twice = %+v then %d %+v, want the same accepted answer", first, status, again)
	}
	if first.ProviderSessionID == "" || first.ProviderSessionID == "thread-1" || first.StateBindingMode != hostCopy {
		t.Fatalf("fork answered %+v, want a new host_copy child", first)
	}
	st := ta.onDisk(t)
	rec, _ := st.request("ws", "r1")
	if childrenOf(st, "r1") != 1 || rec.ForkDeliveries != 2 || rec.ChildID != first.ProviderSessionID {
		t.Fatalf("state has %d children and record %+v, want 1 child and 2 deliveries", childrenOf(st, "r1"), rec)
	}
	child := st.Sessions[first.ProviderSessionID]
	if child.ParentID != "thread-1" || child.ThroughProviderTurnID != "pt-t2" || child.PrefixTurns != 2 {
		t.Fatalf("child session %+v", child)
	}
	if _, other := ta.fork(t, forkOf("r2")); other.ProviderSessionID == first.ProviderSessionID {
		t.Fatalf("a different request id got the same child %q", other.ProviderSessionID)
	}
}

// TestForkRefusals: every refusal is an explicit rejected answer, and makes no child.
func TestForkRefusals(t *testing.T) {
	tests := []struct {
		name   string
		change func(*forkRequest)
		status int
	}{
		{name: "RejectedWithoutRequestID", change: func(r *forkRequest) { r.RequestID = "" }, status: 400},
		{name: "RejectedWithoutProviderSession", change: func(r *forkRequest) { r.Source.ProviderSessionID = "" }, status: 400},
		{name: "RejectedWithUnboundBoundary", change: func(r *forkRequest) {
			r.ThroughTurn.ProviderTurnBinding = json.RawMessage(`null`)
		}, status: 400},
		{name: "RejectedWithoutAPrefix", change: func(r *forkRequest) { r.PrefixTurns = 0 }, status: 400},
		{name: "RejectedWithMoreBoundThanPrefixTurns", change: func(r *forkRequest) { r.BoundTurns = r.PrefixTurns + 1 }, status: 400},
		{name: "RejectedForProviderOwned", change: func(r *forkRequest) { r.Descriptor.StateBindingMode = "provider_owned" }, status: 400},
		{name: "RejectedWhenRequestIDBelongsToAnotherOperation", change: func(r *forkRequest) {
			r.RequestID = "taken"
		}, status: 409},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ta := newTestAdapter(t, "", 0)
			if _, taken := ta.fork(t, forkOf("taken")); taken.Disposition != dispositionAccepted {
				t.Fatalf("setup fork = %+v", taken)
			}
			req := forkOf("r1")
			tt.change(&req)
			status, got := ta.fork(t, req)
			if status != tt.status || got.Disposition != dispositionRejected || got.Error == "" || got.ProviderSessionID != "" {
				t.Fatalf("fork = %d %+v, want %d rejected with a reason", status, got, tt.status)
			}
			if n := len(ta.onDisk(t).Sessions); n != 1 {
				t.Fatalf("state has %d sessions, want only the setup fork's", n)
			}
		})
	}
}

// TestForkRejectsAMismatchedOperationHeader: the header and the body must name one operation.
func TestForkRejectsAMismatchedOperationHeader(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	payload, _ := json.Marshal(forkOf("r1"))
	req, _ := http.NewRequest(http.MethodPost, ta.url+"/fork", bytes.NewReader(payload))
	req.Header.Set(operationHeader, "op-other")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got forkResponse
	_ = json.NewDecoder(resp.Body).Decode(&got)
	if resp.StatusCode != http.StatusBadRequest || got.Disposition != dispositionRejected {
		t.Fatalf("fork = %d %+v, want 400 rejected", resp.StatusCode, got)
	}
	if n := len(ta.onDisk(t).Sessions); n != 0 {
		t.Fatalf("state has %d sessions, want none", n)
	}
}

// TestForkKeepsTheTargetButNotTheEnvironment: the child records the settings, model, cwd and
// runtime context forkgraph froze for it; the dispatch-only environment and target ref reach
// no byte of the state file.
func TestForkKeepsTheTargetButNotTheEnvironment(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	req := forkOf("r1")
	req.Target = wireTarget{Cwd: "/prepared", Model: "gpt-b", Settings: json.RawMessage(`{"model":"gpt-b"}`),
		PreparedContext: json.RawMessage(`{"isolation":{"mode":"worktree","worktreeId":"worktree-1"}}`)}
	req.Environment = []environmentVariable{{Name: "API_TOKEN", Value: "env-marker-5f2c"}}
	req.ProviderTargetRef = "ref-marker-9d1e"
	_, res := ta.fork(t, req)
	if res.Disposition != dispositionAccepted {
		t.Fatalf("fork answered %+v", res)
	}
	child := ta.onDisk(t).Sessions[res.ProviderSessionID]
	var settings, context map[string]any
	if json.Unmarshal(child.Settings, &settings) != nil || json.Unmarshal(child.PreparedContext, &context) != nil {
		t.Fatalf("child session %+v", child)
	}
	isolation, _ := context["isolation"].(map[string]any)
	if child.Model != "gpt-b" || child.Cwd != "/prepared" || settings["model"] != "gpt-b" || isolation["worktreeId"] != "worktree-1" {
		t.Fatalf("child session %+v", child)
	}
	raw, err := os.ReadFile(ta.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"env-marker-5f2c", "ref-marker-9d1e"} {
		if strings.Contains(string(raw), marker) {
			t.Fatalf("the state file holds %q", marker)
		}
	}
}
