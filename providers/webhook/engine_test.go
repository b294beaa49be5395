package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// engineOverAdapter runs the real engine (in-memory store, no background work) over the webhook
// driver pointed at an adapter that describes every session as reconcilable host_copy, says yes
// to every probe, and leaves /fork and /reconcile to handler. It has one root session "src" of two
// settled, provider-bound turns, t1 and t2.
func engineOverAdapter(t *testing.T, handler func(path string, w http.ResponseWriter, r *http.Request)) *forkengine.Engine {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch path := strings.TrimPrefix(r.URL.Path, "/adapter"); path {
		case "/describe":
			reply(w, 200, `{"kind":"k","version":"1","stateBindingMode":"host_copy","throughTurn":true,"reconcile":true}`)
		case "/probe":
			reply(w, 200, `{"forkable":[true]}`)
		default:
			handler(path, w, r)
		}
	}))
	t.Cleanup(srv.Close)
	e, err := forkengine.New(forkengine.Config{
		Store: forkenginetest.NewMemStore(), NoBackground: true,
		Drivers: map[string]forkengine.Driver{"webhook": webhook.New(webhook.Options{BaseURL: srv.URL + "/adapter"})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	ctx := context.Background()
	if _, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "ws", ID: "src", Provider: "webhook",
		ProviderSessionID: ptr("prov-src"), Title: ptr("Plan")}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2"} {
		if _, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: "src", ID: id,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
			ProviderTurnID: ptr("p-" + id), ProviderTurnBinding: json.RawMessage(`{"k":"` + id + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func ptr(s string) *string { return &s }

// forkThrough starts a fork of src through t2 and drives it through dispatch.
func forkThrough(t *testing.T, e *forkengine.Engine, requestID string) forkengine.ForkOperation {
	t.Helper()
	ctx := context.Background()
	op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: "src", ThroughTurnID: "t2", RequestID: requestID})
	if err != nil {
		t.Fatalf("StartFork: %v", err)
	}
	op, err = e.ProcessOperation(ctx, "ws", op.ID)
	if err != nil {
		t.Fatalf("ProcessOperation: %v", err)
	}
	return op
}

// A child id the adapter returns follows the rules reportSession applies to the same field, so no
// session exists that an agent runtime could not have reported: a child id with a control
// character, or longer than MaxTextLength, makes the answer invalid and the delivery unknown.
func TestEngineRefusesAChildIDThatBreaksTheIDRules(t *testing.T) {
	for name, child := range map[string]string{
		"ControlCharacter": `child\n1`,
		"TooLong":          strings.Repeat("x", forkengine.MaxTextLength+1),
	} {
		t.Run(name, func(t *testing.T) {
			e := engineOverAdapter(t, func(path string, w http.ResponseWriter, r *http.Request) {
				reply(w, 200, `{"disposition":"accepted","providerSessionId":"`+child+`"}`)
			})
			op := forkThrough(t, e, "req-1")
			if op.Status != forkengine.StatusUnknown || !strings.Contains(op.Error, "invalid") {
				t.Fatalf("fork = %s (%q), want unknown with an invalid result", op.Status, op.Error)
			}
		})
	}
}

// A /reconcile found answer is validated like an accepted /fork answer: the same fields with an
// error are unverifiable on both paths, so neither commits the child.
func TestEngineJudgesFoundWithAnErrorLikeAcceptedWithAnError(t *testing.T) {
	child := `"providerSessionId":"child-1","stateBindingMode":"host_copy","error":"child made, transcript import failed"`
	e := engineOverAdapter(t, func(path string, w http.ResponseWriter, r *http.Request) {
		reply(w, 200, `{"disposition":"accepted",`+child+`}`)
	})
	if op := forkThrough(t, e, "req-1"); op.Status != forkengine.StatusUnknown {
		t.Fatalf("/fork accepted with an error: %s, want unknown", op.Status)
	}
	e = engineOverAdapter(t, func(path string, w http.ResponseWriter, r *http.Request) {
		switch path {
		case "/fork":
			reply(w, 200, `{"disposition":"unknown"}`)
		case "/reconcile":
			reply(w, 200, `{"answer":"found",`+child+`}`)
		}
	})
	op := forkThrough(t, e, "req-1")
	got, err := e.ReconcileForkOperation(context.Background(), "ws", op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != forkengine.StatusUnknown {
		t.Fatalf("/reconcile found with an error: %s (%q), want unknown like the same /fork answer", got.Status, got.Error)
	}
}

// docs/providers.md, POST /reconcile: an unknown answer's error "explains, and is shown on the
// operation"; the operation stays unknown.
func TestEngineShowsAReconcileUnknownExplanationOnTheOperation(t *testing.T) {
	const why = "the provider's index is still catching up"
	e := engineOverAdapter(t, func(path string, w http.ResponseWriter, r *http.Request) {
		switch path {
		case "/fork":
			reply(w, 200, `{"disposition":"unknown","error":"lost track"}`)
		case "/reconcile":
			reply(w, 200, `{"answer":"unknown","error":"`+why+`"}`)
		}
	})
	op := forkThrough(t, e, "req-1")
	if op.Status != forkengine.StatusUnknown {
		t.Fatalf("after dispatch: %s, want unknown", op.Status)
	}
	got, err := e.ReconcileForkOperation(context.Background(), "ws", op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != forkengine.StatusUnknown || got.ReconcileAttempts != 1 || got.Error != why {
		t.Fatalf("after reconcile: %s, attempts %d, error %q; want unknown, 1, %q", got.Status, got.ReconcileAttempts, got.Error, why)
	}
}
