package simulated_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
)

// session returns a root session whose settings.simulated is script ("" for no script).
func session(script string) forkengine.Session {
	settings := `{}`
	if script != "" {
		settings = `{"simulated":` + script + `}`
	}
	return forkengine.Session{
		WorkspaceID: "ws", ID: "src", Kind: forkengine.SessionRoot, Provider: "simulated",
		ProviderSessionID: "src-provider", Settings: json.RawMessage(settings),
	}
}

func boundTurn(id string, seq int64) forkengine.Turn {
	return forkengine.Turn{
		WorkspaceID: "ws", SessionID: "src", ID: id, Sequence: seq,
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
		ProviderTurnID: "p-" + id, ProviderTurnBinding: json.RawMessage(`{"rollout":"` + id + `"}`),
	}
}

func forkRequest(script, operationID string) forkengine.ForkRequest {
	unbound := boundTurn("t2", 2)
	unbound.ProviderTurnID, unbound.ProviderTurnBinding = "", nil
	turns := []forkengine.Turn{boundTurn("t1", 1), unbound, boundTurn("t3", 3)}
	return forkengine.ForkRequest{
		WorkspaceID: "ws", OperationID: operationID, RequestID: "req-" + operationID,
		Source: session(script), ThroughTurn: turns[2], PrefixTurns: 3, BoundTurns: 2, TargetSessionID: "target",
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		version string
		want    forkengine.Descriptor
		wantErr bool
	}{
		{name: "DefaultHostCopy", want: forkengine.Descriptor{Kind: "simulated", Version: "v1",
			StateBindingMode: forkengine.BindingHostCopy, ThroughTurn: true, Reconcile: true, RecoverBinding: true}},
		{name: "ProviderOwned", script: `{"bindingMode":"provider_owned"}`, version: "v7",
			want: forkengine.Descriptor{Kind: "simulated", Version: "v7",
				StateBindingMode: forkengine.BindingProviderOwned, ThroughTurn: true, Reconcile: true, RecoverBinding: true}},
		{name: "ErrUnknownReconcileAnswer", script: `{"reconcile":"maybe"}`, wantErr: true},
		{name: "ErrUnknownRecoverAnswer", script: `{"recover":"maybe"}`, wantErr: true},
		{name: "ErrNegativeReconcileAfter", script: `{"reconcileAfter":-1}`, wantErr: true},
		{name: "ErrUnknownBindingMode", script: `{"bindingMode":"copy"}`, wantErr: true},
		{name: "ErrUnknownForkOutcome", script: `{"fork":"maybe"}`, wantErr: true},
		{name: "ErrScriptNotObject", script: `[1]`, wantErr: true},
		{name: "ErrNegativeLatency", script: `{"latencyMs":-1}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := simulated.New(simulated.Options{Version: tt.version})
			got, err := d.Describe(context.Background(), session(tt.script))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Describe error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("Describe = %+v, want %+v", got, tt.want)
			}
			if err == nil && !got.SupportsThroughTurn() {
				t.Fatalf("descriptor %+v does not support through-turn forks", got)
			}
			if d.DescribeCalls() != 1 {
				t.Fatalf("DescribeCalls = %d, want 1", d.DescribeCalls())
			}
		})
	}
}

func TestProbeTurns(t *testing.T) {
	running := boundTurn("t9", 9)
	running.Phase, running.Outcome = forkengine.PhaseRunning, ""
	unbound := boundTurn("t8", 8)
	unbound.ProviderTurnBinding = json.RawMessage(`{}`)
	copied := boundTurn("t7", 7)
	copied.ProviderTurnID = copied.ID

	probes := []forkengine.Probe{
		{Session: session(""), Turn: boundTurn("t1", 1)},                 // forkable
		{Session: session(`{"probe":false}`), Turn: boundTurn("t1", 1)},  // scripted no
		{Session: session(`{"probe":true}`), Turn: running},              // not settled
		{Session: session(""), Turn: unbound},                            // empty binding
		{Session: session(""), Turn: copied},                             // provider id copies canonical id
		{Session: session(`{"fork":"bogus"}`), Turn: boundTurn("t1", 1)}, // malformed script
	}
	want := []bool{true, false, false, false, false, false}

	d := simulated.New(simulated.Options{})
	got, err := d.ProbeTurns(context.Background(), probes)
	if err != nil {
		t.Fatalf("ProbeTurns: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("ProbeTurns returned %d answers, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("probe %d = %v, want %v", i, got[i], want[i])
		}
	}
	if d.ProbeCalls() != 1 {
		t.Fatalf("ProbeCalls = %d, want 1 for one batch", d.ProbeCalls())
	}
}

// jsonHas reports whether the JSON object raw mentions want as a string value anywhere.
func jsonHas(t *testing.T, raw json.RawMessage, want string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("binding %s is not JSON: %v", raw, err)
	}
	return strings.Contains(string(raw), `"`+want+`"`)
}

// Reconcile never contradicts the fork's scripted outcome: for a fork the script refuses, no
// child exists, so the answer is absent (after the scripted unknown attempts), however the
// delivery became unknown (a refusal lost with the process that received it).
func TestReconcileOfARefusedForkIsAbsent(t *testing.T) {
	d := simulated.New(simulated.Options{})
	for _, script := range []string{`{"fork":"rejected"}`, `{"fork":"not_started"}`, `{"fork":"rejected","reconcile":"absent"}`,
		`{"fork":"rejected","error":"a\u0000b","reconcileAfter":2}`} {
		s := forkengine.Session{WorkspaceID: "ws", ID: "src", Provider: "simulated", ProviderSessionID: "p",
			Settings: json.RawMessage(`{"simulated":` + script + `}`)}
		after := 0
		if strings.Contains(script, "reconcileAfter") {
			after = 2
		}
		for attempt := 1; attempt <= after+1; attempt++ {
			res, err := d.Reconcile(context.Background(), forkengine.ReconcileRequest{
				ForkRequest: forkengine.ForkRequest{WorkspaceID: "ws", OperationID: "op", Source: s}, Attempt: attempt})
			want := forkengine.ReconcileAbsent
			if attempt <= after {
				want = forkengine.ReconcileUnknown
			}
			if err != nil || res.Answer != want || res.ProviderSessionID != "" {
				t.Fatalf("script %s, attempt %d: %+v, %v; want %s without a child", script, attempt, res, err, want)
			}
		}
	}
}

func TestRecoverBinding(t *testing.T) {
	d := simulated.New(simulated.Options{})
	ask := func(script, submitID, digest string) forkengine.BindingRecoveryResult {
		t.Helper()
		turn := boundTurn("t1", 1)
		turn.ProviderTurnID, turn.ProviderTurnBinding = "", nil
		res, err := d.RecoverBinding(context.Background(), forkengine.BindingRecoveryRequest{WorkspaceID: "ws",
			Session: session(script), Turn: turn, Proof: forkengine.BindingProof{ClientSubmitID: submitID, TextDigest: digest}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	found := ask("", "submit-1", "")
	if found.Answer != forkengine.RecoveryFound || found.ProviderSessionID != "src-provider" ||
		!strings.HasPrefix(found.ProviderTurnID, "simturn-rec-") {
		t.Fatalf("default answer = %+v, want found in the session's provider session", found)
	}
	if !json.Valid(found.ProviderTurnBinding) || !strings.Contains(string(found.ProviderTurnBinding), `"recovered":true`) {
		t.Fatalf("binding %s", found.ProviderTurnBinding)
	}
	if again := ask("", "submit-1", ""); again.ProviderTurnID != found.ProviderTurnID {
		t.Fatalf("one proof found %s, then %s", found.ProviderTurnID, again.ProviderTurnID)
	}
	if other := ask("", "", "ab12"); other.ProviderTurnID == found.ProviderTurnID || other.Answer != forkengine.RecoveryFound {
		t.Fatalf("a text proof found %+v", other)
	}
	for _, answer := range []forkengine.RecoveryAnswer{forkengine.RecoveryAbsent, forkengine.RecoveryAmbiguous} {
		res := ask(`{"recover":"`+string(answer)+`"}`, "submit-1", "")
		if res.Answer != answer || res.ProviderTurnID != "" || res.Error == "" {
			t.Fatalf("script %s answered %+v", answer, res)
		}
	}
	if got := d.RecoverCalls(); got != 5 {
		t.Fatalf("RecoverCalls = %d, want 5", got)
	}
}
