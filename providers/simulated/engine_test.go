package simulated_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
	"github.com/forkgraph/forkgraph/providers/simulated"
)

// These tests run the driver under the real engine (over the in-memory store) to prove that its
// answers pass the engine's checks and that each script ends where docs/providers.md says.

type harness struct {
	engine *forkengine.Engine
	driver *simulated.Driver
	sub    *forkengine.Subscription
}

func newHarness(t *testing.T, script string) *harness {
	t.Helper()
	broker := forkengine.NewBroker(1024)
	driver := simulated.New(simulated.Options{})
	engine, err := forkengine.New(forkengine.Config{
		Store: forkenginetest.NewMemStore(), Publisher: broker,
		Drivers: map[string]forkengine.Driver{"simulated": driver},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close(context.Background()) })
	h := &harness{engine: engine, driver: driver, sub: broker.Subscribe("ws")}
	t.Cleanup(h.sub.Close)
	h.report(t, "src", script, 3)
	return h
}

// report adds a root session with n settled, provider-bound turns.
func (h *harness) report(t *testing.T, id, script string, n int) {
	t.Helper()
	ctx := context.Background()
	settings := json.RawMessage(`{}`)
	if script != "" {
		settings = json.RawMessage(`{"simulated":` + script + `}`)
	}
	ptr := func(s string) *string { return &s }
	if _, err := h.engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "ws", ID: id,
		Provider: "simulated", ProviderSessionID: ptr("prov-" + id), Title: ptr("Source"), Settings: settings}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		turn := fmt.Sprintf("%s-t%d", id, i)
		if _, err := h.engine.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: id, ID: turn,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
			ProviderTurnID: ptr("p-" + turn), ProviderTurnBinding: json.RawMessage(`{"n":1}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

// fork starts a fork through the last turn and returns the statuses it passes through, ending with
// the terminal one, as a subscriber sees them.
func (h *harness) fork(t *testing.T, source, through string) (forkengine.ForkOperation, []forkengine.OperationStatus) {
	t.Helper()
	op, err := h.engine.StartFork(context.Background(), forkengine.ForkInput{WorkspaceID: "ws",
		SourceSessionID: source, ThroughTurnID: through, RequestID: "req-" + through})
	if err != nil {
		t.Fatalf("StartFork: %v", err)
	}
	var seen []forkengine.OperationStatus
	for ev := range h.sub.C() {
		if ev.OperationID != op.ID {
			continue
		}
		seen = append(seen, ev.Status)
		if ev.Status.Terminal() {
			break
		}
	}
	op, err = h.engine.Operation(context.Background(), "ws", op.ID)
	if err != nil {
		t.Fatal(err)
	}
	return op, seen
}

func TestScriptsUnderTheEngine(t *testing.T) {
	all := []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching,
		forkengine.StatusProviderAccepted, forkengine.StatusCommitted}
	dispatched := []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching}
	tests := []struct {
		name      string
		script    string
		want      []forkengine.OperationStatus
		wantError string
	}{
		{name: "CommittedThroughEveryPhase", script: `{"latencyMs":5}`, want: all},
		{name: "CommittedProviderOwned", script: `{"bindingMode":"provider_owned"}`, want: all},
		{name: "FailedWhenRejected", script: `{"fork":"rejected","error":"quota"}`,
			want: append(dispatched, forkengine.StatusFailed), wantError: "quota"},
		{name: "FailedWhenNotStarted", script: `{"fork":"not_started"}`,
			want: append(dispatched, forkengine.StatusFailed), wantError: "simulated provider did not start the fork"},
		{name: "UnknownWhenUnknown", script: `{"fork":"unknown"}`,
			want: append(dispatched, forkengine.StatusUnknown), wantError: "simulated provider fork delivery is unknown"},
		{name: "UnknownWhenAcceptedWithError", script: `{"error":"half done"}`,
			want: append(dispatched, forkengine.StatusUnknown), wantError: "half done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.script)
			op, seen := h.fork(t, "src", "src-t3")
			if fmt.Sprint(seen) != fmt.Sprint(tt.want) {
				t.Fatalf("statuses %v, want %v", seen, tt.want)
			}
			if op.Error != tt.wantError {
				t.Fatalf("operation error %q, want %q", op.Error, tt.wantError)
			}
			if h.driver.ForkCalls() != 1 {
				t.Fatalf("ForkCalls = %d, want 1", h.driver.ForkCalls())
			}
		})
	}
}

// TestForkOfProviderOwnedForkIsForkable shows why provider_owned returns bindings: the child's
// turns carry the driver's fresh bindings, so the child can be forked again.
func TestForkOfProviderOwnedForkIsForkable(t *testing.T) {
	h := newHarness(t, `{"bindingMode":"provider_owned"}`)
	op, _ := h.fork(t, "src", "src-t2")
	child, err := h.engine.Reader().TurnsThrough(context.Background(), "ws", op.TargetSessionID, 1<<62)
	if err != nil || len(child) != 2 {
		t.Fatalf("child turns %d (%v), want 2", len(child), err)
	}
	for _, turn := range child {
		if !turn.HasProviderBinding() || turn.ProviderTurnID == "p-src-t1" || turn.ProviderTurnID == "p-src-t2" {
			t.Fatalf("child turn %s has provider turn %q: want a fresh binding from the driver", turn.ID, turn.ProviderTurnID)
		}
	}
	grandchild, seen := h.fork(t, op.TargetSessionID, child[1].ID)
	if grandchild.Status != forkengine.StatusCommitted {
		t.Fatalf("fork of the fork ended %s (%v): %s", grandchild.Status, seen, grandchild.Error)
	}
}

func TestStartRefusals(t *testing.T) {
	tests := []struct {
		name   string
		script string
		code   forkengine.Code
		reason string
	}{
		{name: "ErrUnforkableWhenProbeFalse", script: `{"probe":false}`, code: forkengine.CodeForkConflict,
			reason: forkengine.ReasonProviderTurnUnforkable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.script)
			_, err := h.engine.StartFork(context.Background(), forkengine.ForkInput{WorkspaceID: "ws",
				SourceSessionID: "src", ThroughTurnID: "src-t3", RequestID: "r1"})
			if !errors.Is(err, &forkengine.Error{Code: tt.code, Reason: tt.reason}) {
				t.Fatalf("StartFork error %v, want %s %s", err, tt.code, tt.reason)
			}
			if h.driver.ForkCalls() != 0 {
				t.Fatalf("ForkCalls = %d, want 0", h.driver.ForkCalls())
			}
		})
	}
}

// A malformed script is refused when the session is reported, with a code and reason of its
// own, and nothing is stored; before, it surfaced only as forkThroughTurn: false. A script whose
// reconcile would find a child of a fork it refuses contradicts itself, and is refused too.
func TestMalformedScriptIsRefusedWhenReported(t *testing.T) {
	h := newHarness(t, "")
	for _, script := range []string{`{"fork":"bogus"}`, `{"reconcile":"later"}`, `{"latencyMs":-5}`, `[1]`,
		`{"fork":"rejected","reconcile":"found"}`, `{"fork":"not_started","reconcile":"found"}`} {
		_, err := h.engine.ReportSession(context.Background(), forkengine.SessionReport{WorkspaceID: "ws", ID: "bad",
			Provider: "simulated", Settings: json.RawMessage(`{"simulated":` + script + `}`)})
		if !errors.Is(err, &forkengine.Error{Code: forkengine.CodeInvalid, Reason: simulated.ReasonInvalidScript}) {
			t.Fatalf("script %s: error %v, want BAD_USER_INPUT %s", script, err, simulated.ReasonInvalidScript)
		}
	}
	if _, err := h.engine.Reader().GetSession(context.Background(), "ws", "bad"); !errors.Is(err, forkengine.ErrNotFound) {
		t.Fatalf("a refused session was stored: %v", err)
	}
}

// An unknown delivery is reconciled as the script says, on the attempt it says.
func TestReconcileFollowsTheScript(t *testing.T) {
	for _, tt := range []struct {
		name   string
		script string
		want   forkengine.OperationStatus
		after  int
	}{
		{name: "FoundByDefault", script: `{"fork":"unknown"}`, want: forkengine.StatusCommitted},
		{name: "Absent", script: `{"fork":"unknown","reconcile":"absent"}`, want: forkengine.StatusFailed},
		{name: "FoundOnTheFourthAttempt", script: `{"fork":"unknown","reconcileAfter":3}`, want: forkengine.StatusCommitted, after: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.script)
			op, _ := h.fork(t, "src", "src-t3")
			if op.Status != forkengine.StatusUnknown {
				t.Fatalf("fork ended %s, want unknown first", op.Status)
			}
			for attempt := 1; attempt <= tt.after; attempt++ {
				got, err := h.engine.ReconcileForkOperation(context.Background(), "ws", op.ID)
				if err != nil || got.Status != forkengine.StatusUnknown || got.ReconcileAttempts != attempt {
					t.Fatalf("attempt %d: %s after %d attempts (%v), want still unknown", attempt, got.Status, got.ReconcileAttempts, err)
				}
			}
			got, err := h.engine.ReconcileForkOperation(context.Background(), "ws", op.ID)
			if err != nil || got.Status != tt.want || got.ReconcileAttempts != tt.after+1 {
				t.Fatalf("final attempt: %s after %d attempts (%v), want %s after %d", got.Status, got.ReconcileAttempts, err, tt.want, tt.after+1)
			}
			if h.driver.ForkCalls() != 1 || h.driver.ReconcileCalls() != int64(tt.after+1) {
				t.Fatalf("fork calls %d, reconcile calls %d", h.driver.ForkCalls(), h.driver.ReconcileCalls())
			}
		})
	}
}

// TestRecoveryScriptsUnderTheEngine: turns reported without a binding but with their submit id
// are forkable through recovery by default; recover absent or ambiguous keeps the refusal; and two
// turns with one proof find one provider turn, which only the first may have.
func TestRecoveryScriptsUnderTheEngine(t *testing.T) {
	ctx := context.Background()
	unbound := func(t *testing.T, h *harness, id, submitID string) {
		t.Helper()
		if _, err := h.engine.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: "src", ID: id,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
			Submission: &forkengine.SubmissionReport{ClientSubmitID: submitID, Content: forkengine.SubmissionMultimodal}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("CommittedThroughTheRecoveredBinding", func(t *testing.T) {
		h := newHarness(t, "")
		unbound(t, h, "src-t4", "submit-4")
		op, seen := h.fork(t, "src", "src-t4")
		if op.Status != forkengine.StatusCommitted || len(seen) != 4 {
			t.Fatalf("fork ended %s (%v): %s", op.Status, seen, op.Error)
		}
		if op.SourceProviderTurnID == "" || h.driver.RecoverCalls() != 1 {
			t.Fatalf("forked through %q after %d recoveries", op.SourceProviderTurnID, h.driver.RecoverCalls())
		}
		unbound(t, h, "src-t5", "submit-4") // the same proof: the provider turn is src-t4's now
		_, err := h.engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: "src",
			ThroughTurnID: "src-t5", RequestID: "req-t5"})
		if forkengine.ErrorReason(err) != forkengine.ReasonProviderTurnMissing {
			t.Fatalf("a provider turn another turn owns: %v", err)
		}
	})
	for _, script := range []string{`{"recover":"absent"}`, `{"recover":"ambiguous"}`} {
		t.Run(script, func(t *testing.T) {
			h := newHarness(t, script)
			unbound(t, h, "src-t4", "submit-4")
			_, err := h.engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: "src",
				ThroughTurnID: "src-t4", RequestID: "req-t4"})
			if forkengine.ErrorCode(err) != forkengine.CodeForkConflict || forkengine.ErrorReason(err) != forkengine.ReasonProviderTurnMissing {
				t.Fatalf("StartFork = %v, want FORK_CONFLICT provider_turn_missing", err)
			}
			if h.driver.RecoverCalls() != 1 || h.driver.ForkCalls() != 0 {
				t.Fatalf("%d recoveries and %d forks", h.driver.RecoverCalls(), h.driver.ForkCalls())
			}
		})
	}
}
