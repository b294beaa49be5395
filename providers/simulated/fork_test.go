package simulated_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
)

func TestForkOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		want      forkengine.Disposition
		wantError string
	}{
		{name: "AcceptedByDefault", want: forkengine.DispositionAccepted},
		{name: "Rejected", script: `{"fork":"rejected","error":"quota exceeded"}`,
			want: forkengine.DispositionRejected, wantError: "quota exceeded"},
		{name: "RejectedDefaultText", script: `{"fork":"rejected"}`,
			want: forkengine.DispositionRejected, wantError: "simulated provider rejected the fork"},
		{name: "NotStarted", script: `{"fork":"not_started"}`,
			want: forkengine.DispositionNotStarted, wantError: "simulated provider did not start the fork"},
		{name: "Unknown", script: `{"fork":"unknown","error":"socket closed"}`,
			want: forkengine.DispositionUnknown, wantError: "socket closed"},
		{name: "AcceptedWithErrorText", script: `{"error":"odd"}`,
			want: forkengine.DispositionAccepted, wantError: "odd"},
		{name: "NotStartedOnMalformedScript", script: `{"bindingMode":"nope"}`,
			want:      forkengine.DispositionNotStarted,
			wantError: `session src: settings.simulated: unknown bindingMode "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := simulated.New(simulated.Options{})
			res, err := d.Fork(context.Background(), forkRequest(tt.script, "op1"))
			if err != nil {
				t.Fatalf("Fork error: %v", err)
			}
			if res.Disposition != tt.want || res.Error != tt.wantError {
				t.Fatalf("Fork = (%s, %q), want (%s, %q)", res.Disposition, res.Error, tt.want, tt.wantError)
			}
			if tt.want != forkengine.DispositionAccepted && res.ProviderSessionID != "" {
				t.Fatalf("non-accepted fork named a child %q", res.ProviderSessionID)
			}
			if d.ForkCalls() != 1 {
				t.Fatalf("ForkCalls = %d, want 1", d.ForkCalls())
			}
		})
	}
}

func TestForkAcceptedHostCopy(t *testing.T) {
	d := simulated.New(simulated.Options{})
	res, err := d.Fork(context.Background(), forkRequest("", "op1"))
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if res.StateBindingMode != forkengine.BindingHostCopy || res.TurnBindings != nil || res.Receipt != "" {
		t.Fatalf("host_copy result carries provider evidence: %+v", res)
	}
	if res.ProviderSessionID == "" || res.ProviderSessionID == "src-provider" {
		t.Fatalf("child provider session id %q must be set and differ from the source", res.ProviderSessionID)
	}
}

func TestForkAcceptedProviderOwned(t *testing.T) {
	d := simulated.New(simulated.Options{})
	req := forkRequest(`{"bindingMode":"provider_owned"}`, "op1")
	res, err := d.Fork(context.Background(), req)
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	if res.StateBindingMode != forkengine.BindingProviderOwned || res.Receipt == "" {
		t.Fatalf("provider_owned result lacks mode or receipt: %+v", res)
	}
	// t1 and t3 are bound, t2 is not: two bindings, in prefix order.
	if len(res.TurnBindings) != 2 {
		t.Fatalf("got %d turn bindings, want 2 (one per bound turn)", len(res.TurnBindings))
	}
	seen := map[string]bool{}
	for i, b := range res.TurnBindings {
		probe := forkengine.Turn{ID: "child-turn", ProviderTurnID: b.ProviderTurnID, ProviderTurnBinding: b.Binding}
		if !probe.HasProviderBinding() {
			t.Errorf("binding %d is not a usable provider binding: %+v", i, b)
		}
		if seen[b.ProviderTurnID] || b.ProviderTurnID == "p-t1" || b.ProviderTurnID == "p-t3" {
			t.Errorf("binding %d reuses provider turn id %q", i, b.ProviderTurnID)
		}
		seen[b.ProviderTurnID] = true
	}
	if !jsonHas(t, res.TurnBindings[1].Binding, "2") {
		t.Fatalf("second binding %s is not the second bound turn's (the boundary turn t3)", res.TurnBindings[1].Binding)
	}
}

func TestForkIsDeterministic(t *testing.T) {
	d := simulated.New(simulated.Options{})
	script := `{"bindingMode":"provider_owned"}`
	a, _ := d.Fork(context.Background(), forkRequest(script, "op1"))
	b, _ := d.Fork(context.Background(), forkRequest(script, "op1"))
	c, _ := d.Fork(context.Background(), forkRequest(script, "op2"))
	if a.ProviderSessionID != b.ProviderSessionID || a.Receipt != b.Receipt ||
		a.TurnBindings[0].ProviderTurnID != b.TurnBindings[0].ProviderTurnID {
		t.Fatalf("same operation gave different children: %+v vs %+v", a, b)
	}
	if a.ProviderSessionID == c.ProviderSessionID {
		t.Fatalf("two operations share child %q", a.ProviderSessionID)
	}
	other := forkRequest(script, "op1")
	other.WorkspaceID = "ws2"
	if o, _ := d.Fork(context.Background(), other); o.ProviderSessionID == a.ProviderSessionID {
		t.Fatalf("two workspaces share child %q", a.ProviderSessionID)
	}
}

func TestForkChildNeverEqualsSource(t *testing.T) {
	d := simulated.New(simulated.Options{})
	first, _ := d.Fork(context.Background(), forkRequest("", "op1"))
	req := forkRequest("", "op1")
	req.Source.ProviderSessionID = first.ProviderSessionID // a source that already has that id
	res, _ := d.Fork(context.Background(), req)
	if res.ProviderSessionID == req.Source.ProviderSessionID {
		t.Fatalf("child provider session id equals the source's: %q", res.ProviderSessionID)
	}
}

func TestForkLatency(t *testing.T) {
	t.Run("UnknownWhenContextEndsWhileWaiting", func(t *testing.T) {
		d := simulated.New(simulated.Options{Latency: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		var res forkengine.ForkResult
		var err error
		go func() {
			defer close(done)
			res, err = d.Fork(ctx, forkRequest("", "op1"))
		}()
		cancel()
		<-done
		if res.Disposition != forkengine.DispositionUnknown || !errors.Is(err, context.Canceled) {
			t.Fatalf("Fork = (%s, %v), want unknown with context.Canceled", res.Disposition, err)
		}
	})
	t.Run("ScriptOverridesDefault", func(t *testing.T) {
		d := simulated.New(simulated.Options{Latency: time.Hour})
		res, err := d.Fork(context.Background(), forkRequest(`{"latencyMs":0}`, "op1"))
		if err != nil || res.Disposition != forkengine.DispositionAccepted {
			t.Fatalf("Fork = (%s, %v), want accepted at once", res.Disposition, err)
		}
	})
	t.Run("DescribeAndProbeIgnoreLatency", func(t *testing.T) {
		d := simulated.New(simulated.Options{Latency: time.Hour})
		if _, err := d.Describe(context.Background(), session("")); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ProbeTurns(context.Background(), []forkengine.Probe{{Session: session(""), Turn: boundTurn("t1", 1)}}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestConcurrentUseCountsEveryCall(t *testing.T) {
	d := simulated.New(simulated.Options{})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = d.Fork(context.Background(), forkRequest("", "op"))
			_, _ = d.Describe(context.Background(), session(""))
			_, _ = d.ProbeTurns(context.Background(), nil)
		}()
	}
	wg.Wait()
	if d.ForkCalls() != 16 || d.DescribeCalls() != 16 || d.ProbeCalls() != 16 {
		t.Fatalf("counters = %d/%d/%d, want 16 each", d.ForkCalls(), d.DescribeCalls(), d.ProbeCalls())
	}
}

// A fork "with another model": the target's model (what the child will use) must be one the
// script's provider offers; the source's own model does not matter.
func TestForkTargetModelMustBeOffered(t *testing.T) {
	for _, tt := range []struct {
		name, model string
		want        forkengine.Disposition
		wantError   string
	}{
		{name: "Offered", model: "gpt-b", want: forkengine.DispositionAccepted},
		{name: "NotOffered", model: "gpt-z", want: forkengine.DispositionRejected,
			wantError: `simulated provider does not offer model "gpt-z"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := simulated.New(simulated.Options{})
			req := forkRequest(`{"models":["gpt-a","gpt-b"]}`, "op1")
			req.Source.Model, req.Target.Model = "gpt-z", tt.model
			res, err := d.Fork(context.Background(), req)
			if err != nil {
				t.Fatalf("Fork error: %v", err)
			}
			if res.Disposition != tt.want || res.Error != tt.wantError {
				t.Fatalf("Fork = (%s, %q), want (%s, %q)", res.Disposition, res.Error, tt.want, tt.wantError)
			}
		})
	}
}
