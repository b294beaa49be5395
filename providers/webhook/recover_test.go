package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

func recoverRequest() forkengine.BindingRecoveryRequest {
	turn := boundTurn("t2", 2)
	turn.ProviderTurnID, turn.ProviderTurnBinding = "", nil
	return forkengine.BindingRecoveryRequest{WorkspaceID: "ws", Session: sourceSession(), Turn: turn,
		Proof: forkengine.BindingProof{ClientSubmitID: "submit-2", TextKey: []byte{0xab, 0x01}, TextDigest: "c0ffee"}}
}

// TestRecoverBindingRequest: the body names the workspace, the session, the turn and the proof,
// the text digest with its key in hex and never any text.
func TestRecoverBindingRequest(t *testing.T) {
	var got map[string]any
	d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/adapter/recover-binding" || r.Method != http.MethodPost {
			t.Errorf("%s %s", r.Method, r.URL.Path)
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &got); err != nil {
			t.Errorf("body %s: %v", body, err)
		}
		reply(w, 200, `{"answer":"absent"}`)
	})
	if _, err := d.RecoverBinding(context.Background(), recoverRequest()); err != nil {
		t.Fatal(err)
	}
	proof, _ := got["proof"].(map[string]any)
	digest, _ := proof["textDigest"].(map[string]any)
	if got["workspaceId"] != "ws" || proof["clientSubmitId"] != "submit-2" || digest["algorithm"] != "hmac-sha256" ||
		digest["key"] != "ab01" || digest["digest"] != "c0ffee" {
		t.Fatalf("request body %v", got)
	}
	if turn, _ := got["turn"].(map[string]any); turn["id"] != "t2" || turn["providerTurnBinding"] != nil {
		t.Fatalf("turn %v", turn)
	}
	if session, _ := got["session"].(map[string]any); session["providerSessionId"] != "prov-src" {
		t.Fatalf("session %v", session)
	}

	req := recoverRequest()
	req.Proof = forkengine.BindingProof{ClientSubmitID: "submit-2"}
	if _, err := d.RecoverBinding(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if proof, _ := got["proof"].(map[string]any); proof["textDigest"] != nil {
		t.Fatalf("a proof without a text digest sent %v", proof)
	}
}

// TestRecoverBindingAnswers: only a decodable 2xx saying found, absent or ambiguous is an answer;
// anything else is an error, which the engine reads as nothing found.
func TestRecoverBindingAnswers(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		body        string
		want        forkengine.RecoveryAnswer
		wantErr     string
		unavailable bool
	}{
		{name: "Found", status: 200, body: `{"answer":"found","providerSessionId":"prov-src","providerTurnId":"pt-2",
			"providerTurnBinding":{"rollout":"r-2"}}`, want: forkengine.RecoveryFound},
		{name: "Absent", status: 200, body: `{"answer":"absent","error":"no turn with that submit id"}`, want: forkengine.RecoveryAbsent},
		{name: "Ambiguous", status: 200, body: `{"answer":"ambiguous","error":"2 turns match"}`, want: forkengine.RecoveryAmbiguous},
		{name: "ErrOnAnotherAnswer", status: 200, body: `{"answer":"accepted"}`, wantErr: "no valid answer"},
		{name: "ErrOnUndecodable", status: 200, body: `{"answer":`, wantErr: "decode"},
		{name: "ErrOn4xxClaimingFound", status: 404, body: `{"answer":"found","providerTurnId":"pt-2"}`, wantErr: "HTTP 404"},
		{name: "ErrOn5xx", status: 502, body: `{"error":"gateway"}`, wantErr: "HTTP 502", unavailable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, hits := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) { reply(w, tt.status, tt.body) })
			res, err := d.RecoverBinding(context.Background(), recoverRequest())
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || res.Answer != "" {
					t.Fatalf("RecoverBinding = (%+v, %v), want an error with %q", res, err, tt.wantErr)
				}
				if errors.Is(err, forkengine.ErrProviderUnavailable) != tt.unavailable {
					t.Fatalf("unavailable = %v, want %v: %v", !tt.unavailable, tt.unavailable, err)
				}
			case err != nil || res.Answer != tt.want:
				t.Fatalf("RecoverBinding = (%+v, %v), want %s", res, err, tt.want)
			}
			if tt.want == forkengine.RecoveryFound && (res.ProviderTurnID != "pt-2" || res.ProviderSessionID != "prov-src" ||
				string(res.ProviderTurnBinding) != `{"rollout":"r-2"}`) {
				t.Fatalf("found %+v", res)
			}
			if hits.Load() != 1 {
				t.Fatalf("adapter got %d requests, want 1", hits.Load())
			}
		})
	}
}

func TestRecoverBindingUnreachable(t *testing.T) {
	d := webhook.New(webhook.Options{BaseURL: "http://127.0.0.1:1"})
	_, err := d.RecoverBinding(context.Background(), recoverRequest())
	if !errors.Is(err, forkengine.ErrProviderUnavailable) {
		t.Fatalf("RecoverBinding = %v, want ErrProviderUnavailable", err)
	}
}
