package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// adapter starts a fake provider adapter on 127.0.0.1 and returns a driver pointed at it and a
// counter of requests the adapter received.
func adapter(t *testing.T, opts webhook.Options, h http.HandlerFunc) (*webhook.Driver, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL + "/adapter"
	return webhook.New(opts), &hits
}

// reply writes status and a raw body.
func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func sourceSession() forkengine.Session {
	return forkengine.Session{
		WorkspaceID: "ws", ID: "src", Kind: forkengine.SessionRoot, Provider: "webhook",
		ProviderSessionID: "prov-src", Title: "Plan", Settings: json.RawMessage(`{"model":"x"}`),
	}
}

func boundTurn(id string, seq int64) forkengine.Turn {
	return forkengine.Turn{
		WorkspaceID: "ws", SessionID: "src", ID: id, Sequence: seq, Phase: forkengine.PhaseSettled,
		Outcome: forkengine.OutcomeCompleted, ProviderTurnID: "p-" + id,
		ProviderTurnBinding: json.RawMessage(`{"k":"` + id + `"}`),
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		want    forkengine.Descriptor
		wantErr bool
	}{
		{name: "OK", status: 200,
			body: `{"kind":"codex","version":"1.2","stateBindingMode":"provider_owned","throughTurn":true}`,
			want: forkengine.Descriptor{Kind: "codex", Version: "1.2",
				StateBindingMode: forkengine.BindingProviderOwned, ThroughTurn: true}},
		{name: "OKWithReconcile", status: 200,
			body: `{"kind":"ref","version":"1","stateBindingMode":"host_copy","throughTurn":true,"reconcile":true}`,
			want: forkengine.Descriptor{Kind: "ref", Version: "1",
				StateBindingMode: forkengine.BindingHostCopy, ThroughTurn: true, Reconcile: true}},
		{name: "ErrStatus", status: 500, body: `{"error":"down"}`, wantErr: true},
		{name: "ErrUndecodableBody", status: 200, body: `{"kind":`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				Session struct {
					ID       string          `json:"id"`
					Settings json.RawMessage `json:"settings"`
				} `json:"session"`
			}
			d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/adapter/describe" || r.Method != http.MethodPost {
					t.Errorf("request %s %s, want POST /adapter/describe", r.Method, r.URL.Path)
				}
				_ = json.NewDecoder(r.Body).Decode(&got)
				reply(w, tt.status, tt.body)
			})
			desc, err := d.Describe(context.Background(), sourceSession())
			if (err != nil) != tt.wantErr {
				t.Fatalf("Describe error = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && desc != tt.want {
				t.Fatalf("Describe = %+v, want %+v", desc, tt.want)
			}
			if got.Session.ID != "src" || string(got.Session.Settings) != `{"model":"x"}` {
				t.Fatalf("adapter received session %+v", got.Session)
			}
		})
	}
}

func TestProbeTurns(t *testing.T) {
	probes := []forkengine.Probe{
		{Session: sourceSession(), Turn: boundTurn("t1", 1)},
		{Session: sourceSession(), Turn: boundTurn("t2", 2)},
		{Session: sourceSession(), Turn: boundTurn("t3", 3)},
	}
	tests := []struct {
		name    string
		status  int
		body    string
		want    []bool
		wantErr bool
	}{
		{name: "OK", status: 200, body: `{"forkable":[true,false,true]}`, want: []bool{true, false, true}},
		{name: "ErrWrongLength", status: 200, body: `{"forkable":[true]}`, wantErr: true},
		{name: "ErrStatus", status: 503, body: ``, wantErr: true},
		{name: "ErrUndecodableBody", status: 200, body: `nope`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var turnIDs []string
			d, hits := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
				var in struct {
					Probes []struct {
						Turn struct {
							ID string `json:"id"`
						} `json:"turn"`
					} `json:"probes"`
				}
				_ = json.NewDecoder(r.Body).Decode(&in)
				for _, p := range in.Probes {
					turnIDs = append(turnIDs, p.Turn.ID)
				}
				reply(w, tt.status, tt.body)
			})
			got, err := d.ProbeTurns(context.Background(), probes)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ProbeTurns error = %v, want error %v", err, tt.wantErr)
			}
			if hits.Load() != 1 {
				t.Fatalf("adapter got %d requests, want 1 for the whole batch", hits.Load())
			}
			if len(turnIDs) != 3 || turnIDs[0] != "t1" || turnIDs[2] != "t3" {
				t.Fatalf("adapter received probes %v, want [t1 t2 t3]", turnIDs)
			}
			for i := range tt.want {
				if got[i] != tt.want[i] {
					t.Fatalf("ProbeTurns = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestProbeTurnsEmptyBatchMakesNoRequest(t *testing.T) {
	d, hits := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, `{"forkable":[]}`)
	})
	got, err := d.ProbeTurns(context.Background(), nil)
	if err != nil || len(got) != 0 || hits.Load() != 0 {
		t.Fatalf("ProbeTurns(nil) = %v, %v with %d requests; want empty, nil, 0", got, err, hits.Load())
	}
}
