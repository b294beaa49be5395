package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

func forkRequest() forkengine.ForkRequest {
	turns := []forkengine.Turn{boundTurn("t1", 1), boundTurn("t2", 2)}
	return forkengine.ForkRequest{
		WorkspaceID: "ws", RequestedBy: "auth0|ada", OperationID: "op-1", RequestID: "req-1", Source: sourceSession(),
		ThroughTurn: turns[1], PrefixTurns: len(turns), BoundTurns: len(turns), TargetSessionID: "target", TargetTitle: "Plan (2)",
		Descriptor: forkengine.Descriptor{Kind: "codex", Version: "1", StateBindingMode: forkengine.BindingHostCopy, ThroughTurn: true},
	}
}

// TestForkAnswers covers every mapping of an answer the adapter actually sent.
func TestForkAnswers(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		want      forkengine.Disposition
		wantError string // substring of ForkResult.Error
	}{
		{name: "AcceptedOn2xx", status: 200,
			body: `{"disposition":"accepted","providerSessionId":"child","stateBindingMode":"host_copy"}`,
			want: forkengine.DispositionAccepted},
		{name: "RejectedOn2xxBody", status: 200, body: `{"disposition":"rejected","error":"quota"}`,
			want: forkengine.DispositionRejected, wantError: "quota"},
		{name: "NotStartedOn2xxBody", status: 202, body: `{"disposition":"not_started"}`,
			want: forkengine.DispositionNotStarted, wantError: "provider adapter reported not_started"},
		{name: "UnknownOn2xxBody", status: 200, body: `{"disposition":"unknown","error":"lost"}`,
			want: forkengine.DispositionUnknown, wantError: "lost"},
		{name: "UnknownWhenDispositionMissing", status: 200, body: `{"providerSessionId":"child"}`,
			want: forkengine.DispositionUnknown, wantError: "no valid disposition"},
		{name: "UnknownWhenDispositionUnrecognised", status: 200, body: `{"disposition":"done"}`,
			want: forkengine.DispositionUnknown, wantError: `"done"`},
		{name: "UnknownWhenBodyUndecodable", status: 200, body: `{"disposition":`,
			want: forkengine.DispositionUnknown, wantError: "could not be decoded"},
		{name: "RejectedOnErrorStatusWithExplicitDisposition", status: 409,
			body: `{"disposition":"rejected","error":"turn is gone"}`,
			want: forkengine.DispositionRejected, wantError: "HTTP 409: turn is gone"},
		{name: "NotStartedOn5xxWithExplicitDisposition", status: 503, body: `{"disposition":"not_started"}`,
			want: forkengine.DispositionNotStarted, wantError: "HTTP 503"},
		{name: "UnsupportedOnErrorStatusWithExplicitDisposition", status: 422, body: `{"disposition":"unsupported"}`,
			want: forkengine.DispositionUnsupported, wantError: "HTTP 422"},
		{name: "RejectedOn4xxWithErrorBody", status: 400, body: `{"error":"binding expired"}`,
			want: forkengine.DispositionRejected, wantError: "binding expired"},
		{name: "UnknownOn4xxWithoutErrorBody", status: 404, body: `404 page not found`,
			want: forkengine.DispositionUnknown, wantError: "HTTP 404"},
		{name: "UnknownOn5xxWithErrorBody", status: 500, body: `{"error":"panic"}`,
			want: forkengine.DispositionUnknown, wantError: "HTTP 500: panic"},
		{name: "UnknownOnErrorStatusClaimingAcceptance", status: 500,
			body: `{"disposition":"accepted","providerSessionId":"child"}`,
			want: forkengine.DispositionUnknown, wantError: "claiming acceptance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, hits := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
				reply(w, tt.status, tt.body)
			})
			res, _ := d.Fork(context.Background(), forkRequest())
			if res.Disposition != tt.want || !strings.Contains(res.Error, tt.wantError) {
				t.Fatalf("Fork = (%s, %q), want (%s, containing %q)", res.Disposition, res.Error, tt.want, tt.wantError)
			}
			if hits.Load() != 1 {
				t.Fatalf("adapter got %d requests, want exactly 1", hits.Load())
			}
		})
	}
}

func TestForkSendsTheRequest(t *testing.T) {
	var got map[string]any
	var operationID, auth string
	d, _ := adapter(t, webhook.Options{Headers: map[string]string{"Authorization": "Bearer test"}},
		func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/adapter/fork" {
				t.Errorf("path %s, want /adapter/fork", r.URL.Path)
			}
			operationID, auth = r.Header.Get("Forkgraph-Operation-Id"), r.Header.Get("Authorization")
			if r.Header.Get("Idempotency-Key") != "" {
				t.Errorf("Idempotency-Key set: Go's client would replay the fork on a broken connection")
			}
			_ = json.NewDecoder(r.Body).Decode(&got)
			reply(w, 200, `{"disposition":"accepted","providerSessionId":"child","stateBindingMode":"provider_owned",
				"turnBindings":[{"providerTurnId":"c1","binding":{"a":1}},{"providerTurnId":"c2","binding":{"a":2}}],
				"receipt":"r-1"}`)
		})
	res, err := d.Fork(context.Background(), forkRequest())
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if operationID != "op-1" || auth != "Bearer test" {
		t.Fatalf("headers Forkgraph-Operation-Id=%q Authorization=%q", operationID, auth)
	}
	if got["operationId"] != "op-1" || got["targetSessionId"] != "target" || got["targetTitle"] != "Plan (2)" ||
		got["requestedBy"] != "auth0|ada" {
		t.Fatalf("adapter received %v", got)
	}
	if got["prefixTurns"] != float64(2) || got["boundTurns"] != float64(2) || got["turns"] != nil {
		t.Fatalf("adapter received prefix %v/%v and turns %v, want the counts of the 2-turn prefix and no turns",
			got["prefixTurns"], got["boundTurns"], got["turns"])
	}
	if res.ProviderSessionID != "child" || res.StateBindingMode != forkengine.BindingProviderOwned ||
		res.Receipt != "r-1" || len(res.TurnBindings) != 2 || string(res.TurnBindings[1].Binding) != `{"a":2}` {
		t.Fatalf("Fork result %+v", res)
	}
}

func TestForkAcceptedWithoutModeDefaultsToHostCopy(t *testing.T) {
	d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, `{"disposition":"accepted","providerSessionId":"child"}`)
	})
	res, err := d.Fork(context.Background(), forkRequest())
	if err != nil || res.StateBindingMode != forkengine.BindingHostCopy {
		t.Fatalf("Fork = %+v, %v; want host_copy", res, err)
	}
}

// The target (what the child will be given) and the dispatch-only values are on the /fork wire.
func TestForkSendsTheTarget(t *testing.T) {
	var got struct {
		Target struct {
			Cwd, Model     string
			Settings       map[string]any
			RuntimeContext map[string]any
		}
		Environment       []forkengine.EnvironmentVariable
		ProviderTargetRef string
	}
	d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		reply(w, 200, `{"disposition":"accepted","providerSessionId":"child","stateBindingMode":"host_copy"}`)
	})
	req := forkRequest()
	req.Target = forkengine.ForkTarget{Cwd: "/prepared", Model: "gpt-b", Settings: json.RawMessage(`{"model":"gpt-b"}`),
		PreparedContext: json.RawMessage(`{"isolation":{"mode":"worktree","worktreeId":"worktree-1"}}`)}
	req.Environment = []forkengine.EnvironmentVariable{{Name: "TOKEN", Value: "v"}}
	req.ProviderTargetRef = "ref-1"
	if _, err := d.Fork(context.Background(), req); err != nil {
		t.Fatalf("Fork: %v", err)
	}
	isolation, _ := got.Target.RuntimeContext["isolation"].(map[string]any)
	if got.Target.Cwd != "/prepared" || got.Target.Model != "gpt-b" || got.Target.Settings["model"] != "gpt-b" ||
		isolation["worktreeId"] != "worktree-1" {
		t.Fatalf("adapter received target %+v", got.Target)
	}
	if len(got.Environment) != 1 || got.Environment[0] != req.Environment[0] || got.ProviderTargetRef != "ref-1" {
		t.Fatalf("adapter received environment %v and target ref %q", got.Environment, got.ProviderTargetRef)
	}
}
