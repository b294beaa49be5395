package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

func reconcileRequest() forkengine.ReconcileRequest {
	return forkengine.ReconcileRequest{ForkRequest: forkRequest(), Attempt: 3}
}

// TestReconcileAnswers: only a decodable 2xx saying found or absent is taken as such; anything
// else is unknown, so nothing but the adapter's own answer commits a fork or frees its boundary.
func TestReconcileAnswers(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		want      forkengine.ReconcileAnswer
		wantErr   bool
		wantError string // substring of ReconcileResult.Error
	}{
		{name: "FoundHostCopyByDefault", status: 200, body: `{"answer":"found","providerSessionId":"child"}`,
			want: forkengine.ReconcileFound},
		{name: "FoundProviderOwned", status: 200, body: `{"answer":"found","providerSessionId":"child",
			"stateBindingMode":"provider_owned","turnBindings":[{"providerTurnId":"c1","binding":{"a":1}}],"receipt":"r-1"}`,
			want: forkengine.ReconcileFound},
		{name: "Absent", status: 200, body: `{"answer":"absent","error":"never seen; tombstoned"}`,
			want: forkengine.ReconcileAbsent, wantError: "tombstoned"},
		{name: "UnknownAnswered", status: 200, body: `{"answer":"unknown","error":"still indexing"}`,
			want: forkengine.ReconcileUnknown, wantError: "still indexing"},
		{name: "UnknownAnsweredWithoutText", status: 200, body: `{"answer":"unknown"}`,
			want: forkengine.ReconcileUnknown, wantError: "cannot tell"},
		{name: "UnknownOnMissingAnswer", status: 200, body: `{"providerSessionId":"child"}`,
			want: forkengine.ReconcileUnknown, wantErr: true, wantError: "is not found, absent or unknown"},
		{name: "UnknownOnForkDisposition", status: 200, body: `{"answer":"accepted","providerSessionId":"child"}`,
			want: forkengine.ReconcileUnknown, wantErr: true, wantError: "is not found, absent or unknown"},
		{name: "UnknownOnUndecodableBody", status: 200, body: `{"answer":`,
			want: forkengine.ReconcileUnknown, wantErr: true, wantError: "decode"},
		{name: "UnknownOn4xxClaimingAbsent", status: 404, body: `{"answer":"absent"}`,
			want: forkengine.ReconcileUnknown, wantErr: true, wantError: "HTTP 404"},
		{name: "UnknownOn4xxClaimingFound", status: 409, body: `{"answer":"found","providerSessionId":"child"}`,
			want: forkengine.ReconcileUnknown, wantErr: true, wantError: "HTTP 409"},
		{name: "UnknownOn5xx", status: 503, body: `{"error":"restarting"}`,
			want: forkengine.ReconcileUnknown, wantErr: true, wantError: "HTTP 503: restarting"},
		{name: "UnknownOnRedirect", status: 307, body: ``,
			want: forkengine.ReconcileUnknown, wantErr: true, wantError: "HTTP 307"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, hits := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
				reply(w, tt.status, tt.body)
			})
			res, err := d.Reconcile(context.Background(), reconcileRequest())
			if res.Answer != tt.want || !strings.Contains(res.Error, tt.wantError) {
				t.Fatalf("Reconcile = (%s, %q), want (%s, containing %q)", res.Answer, res.Error, tt.want, tt.wantError)
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Reconcile error = %v, want error %v", err, tt.wantErr)
			}
			if res.Answer != forkengine.ReconcileFound && res.ProviderSessionID != "" {
				t.Fatalf("a %s answer carries child %q", res.Answer, res.ProviderSessionID)
			}
			if hits.Load() != 1 {
				t.Fatalf("adapter got %d requests, want exactly 1", hits.Load())
			}
		})
	}
}

func TestReconcileFoundCarriesTheChild(t *testing.T) {
	d, _ := adapter(t, webhook.Options{}, func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, `{"answer":"found","providerSessionId":"child","stateBindingMode":"provider_owned",
			"turnBindings":[{"providerTurnId":"c1","binding":{"a":1}},{"providerTurnId":"c2","binding":{"a":2}}],
			"receipt":"r-1"}`)
	})
	res, err := d.Reconcile(context.Background(), reconcileRequest())
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if res.ProviderSessionID != "child" || res.StateBindingMode != forkengine.BindingProviderOwned ||
		res.Receipt != "r-1" || len(res.TurnBindings) != 2 || string(res.TurnBindings[1].Binding) != `{"a":2}` {
		t.Fatalf("Reconcile result %+v", res)
	}
}

// TestReconcileTransportFailures: whether or not the request left, a failed exchange is unknown,
// never absent; an unreachable adapter is also marked unavailable.
func TestReconcileTransportFailures(t *testing.T) {
	tests := []struct {
		name            string
		driver          func(t *testing.T) (*webhook.Driver, func() int64)
		wantUnavailable bool
	}{
		{name: "UnknownOnClosedPort", driver: closedPort, wantUnavailable: true},
		{name: "UnknownOnDNSFailure", driver: dnsFailure, wantUnavailable: true},
		{name: "UnknownOnBadURL", driver: badURL},
		{name: "UnknownWhenAdapterHangsPastTimeout", driver: hangingAdapter, wantUnavailable: true},
		{name: "UnknownWhenConnectionDrops", driver: droppingAdapter, wantUnavailable: true},
		{name: "UnknownWhenBodyStalls", driver: stallingBodyAdapter, wantUnavailable: true},
		{name: "UnknownWhenResponseTooLarge", driver: oversizedAdapter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := tt.driver(t)
			res, err := d.Reconcile(context.Background(), reconcileRequest())
			if res.Answer != forkengine.ReconcileUnknown || res.Error == "" || err == nil {
				t.Fatalf("Reconcile = (%s, %q), %v; want unknown with an error text and an error", res.Answer, res.Error, err)
			}
			if got := errors.Is(err, forkengine.ErrProviderUnavailable); got != tt.wantUnavailable {
				t.Fatalf("error %q: unavailable = %v, want %v", err, got, tt.wantUnavailable)
			}
		})
	}
}

// TestReconcileSendsTheForkRequest: the adapter gets what /fork got, plus the attempt, on
// /reconcile and never on /fork.
func TestReconcileSendsTheForkRequest(t *testing.T) {
	var got map[string]any
	var path, operationID, auth string
	d, hits := adapter(t, webhook.Options{Headers: map[string]string{"Authorization": "Bearer test"}},
		func(w http.ResponseWriter, r *http.Request) {
			path, operationID, auth = r.URL.Path, r.Header.Get("Forkgraph-Operation-Id"), r.Header.Get("Authorization")
			_ = json.NewDecoder(r.Body).Decode(&got)
			reply(w, 200, `{"answer":"unknown"}`)
		})
	if _, err := d.Reconcile(context.Background(), reconcileRequest()); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if hits.Load() != 1 || path != "/adapter/reconcile" {
		t.Fatalf("adapter got %d requests, last to %s; want one to /adapter/reconcile", hits.Load(), path)
	}
	if operationID != "op-1" || auth != "Bearer test" {
		t.Fatalf("headers Forkgraph-Operation-Id=%q Authorization=%q", operationID, auth)
	}
	source, _ := got["source"].(map[string]any)
	if got["attempt"] != float64(3) || got["requestId"] != "req-1" || got["operationId"] != "op-1" ||
		got["workspaceId"] != "ws" || got["targetSessionId"] != "target" || got["prefixTurns"] != float64(2) ||
		source["providerSessionId"] != "prov-src" {
		t.Fatalf("adapter received %v", got)
	}
}
