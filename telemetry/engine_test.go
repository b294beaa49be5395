package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
	"github.com/forkgraph/forkgraph/providers/simulated"
)

// The decorators under the real engine: a fork whose delivery is unknown, then reconciled to
// committed, counts every transition once (unknown is terminal until reconciliation moves it
// on), its driver calls by disposition and answer, and validation still refuses a bad script.
func TestDecoratorsUnderTheEngine(t *testing.T) {
	ctx := context.Background()
	tel := New(Options{Logger: slog.New(slog.DiscardHandler)})
	mem := forkenginetest.NewMemStore()
	forks := tel.Publisher(forkengine.NewBroker(64), mem)
	engine, err := forkengine.New(forkengine.Config{
		Store: tel.Store(mem), Publisher: forks, NoBackground: true, Logger: slog.New(slog.DiscardHandler),
		Drivers: tel.Drivers(map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = engine.Close(ctx) }()
	ptr := func(s string) *string { return &s }
	report := func(settings string) error {
		_, err := engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: "s", Provider: "simulated",
			ProviderSessionID: ptr("p-s"), Title: ptr("Source"), Settings: json.RawMessage(settings)})
		return err
	}
	var invalid *forkengine.Error
	if err := report(`{"simulated":{"fork":"sideways"}}`); !errors.As(err, &invalid) || invalid.Code != forkengine.CodeInvalid {
		t.Fatalf("a malformed script: %v, want BAD_USER_INPUT from the driver's validation through the wrapper", err)
	}
	if err := report(`{"simulated":{"fork":"unknown","reconcile":"found"}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := engine.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: "s", ID: "t1",
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptr("p-t1"),
		ProviderTurnBinding: json.RawMessage(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	op, err := engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "s", ThroughTurnID: "t1", RequestID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if op, err = engine.ProcessOperation(ctx, "w", op.ID); err != nil || op.Status != forkengine.StatusUnknown {
		t.Fatalf("dispatch: %s, %v; want unknown", op.Status, err)
	}
	if op, err = engine.ReconcileForkOperation(ctx, "w", op.ID); err != nil || op.Status != forkengine.StatusCommitted {
		t.Fatalf("reconcile: %s, %v; want committed", op.Status, err)
	}
	forks.Wait()

	m := tel.Metrics
	for status, want := range map[string]float64{"prepared": 1, "dispatching": 1, "unknown": 1, "provider_accepted": 1, "committed": 1} {
		if got := testutil.ToFloat64(m.forkTransitions.WithLabelValues(status)); got != want {
			t.Errorf("transitions{%s} = %v, want %v", status, got, want)
		}
	}
	for _, status := range []string{"unknown", "committed"} {
		if n, _ := histogram(t, tel, status); n != 1 {
			t.Errorf("duration{%s}: %d samples, want 1", status, n)
		}
	}
	for labels, want := range map[[2]string]float64{{"fork", "unknown"}: 1, {"reconcile", "found"}: 1} {
		if got := testutil.ToFloat64(m.driverCalls.WithLabelValues("simulated", labels[0], labels[1])); got != want {
			t.Errorf("driver calls %v = %v, want %v", labels, got, want)
		}
	}
	if got := testutil.ToFloat64(m.leaseClaims.WithLabelValues("reconcile")); got != 1 {
		t.Errorf("reconcile claims = %v, want 1 (the on-demand attempt)", got)
	}
	rollback := &dto.Metric{}
	if err := m.txDuration.WithLabelValues("rollback").(prometheus.Metric).Write(rollback); err != nil {
		t.Fatal(err)
	}
	if n := rollback.GetHistogram().GetSampleCount(); n != 1 {
		t.Errorf("rolled back transactions = %d, want 1 (the refused report)", n)
	}
}
