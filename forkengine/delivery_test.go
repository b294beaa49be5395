package forkengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// Every row of the delivery table (reference §3.5) makes exactly one Fork call.
func TestDeliveryDisposition(t *testing.T) {
	t.Parallel()
	accepted := func(mutate func(*forkengine.ForkResult)) func(context.Context, forkengine.ForkRequest) (forkengine.ForkResult, error) {
		return func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
			res := forkenginetest.AcceptedResult(req)
			mutate(&res)
			return res, nil
		}
	}
	result := func(d forkengine.Disposition, errText string) forkenginetest.ForkStep {
		return forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: d, Error: errText}}
	}
	tests := []struct {
		name      string
		step      forkenginetest.ForkStep
		status    forkengine.OperationStatus
		errorText string
	}{
		{"OKAcceptedCommits", forkenginetest.ForkStep{Func: accepted(func(*forkengine.ForkResult) {})}, forkengine.StatusCommitted, ""},
		{"OKAcceptedEmptyModeIsHostCopy", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) { r.StateBindingMode = "" })}, forkengine.StatusCommitted, ""},
		{"FailedNotStarted", result(forkengine.DispositionNotStarted, ""), forkengine.StatusFailed, "provider fork was not started"},
		{"FailedRejected", result(forkengine.DispositionRejected, "provider fork failed"), forkengine.StatusFailed, "provider fork failed"},
		{"FailedRejectedWithCallError", forkenginetest.ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionRejected}, Err: errors.New("json-rpc error -32000")}, forkengine.StatusFailed, "provider call failed"},
		{"FailedUnsupported", result(forkengine.DispositionUnsupported, ""), forkengine.StatusFailed, "provider does not support this fork"},
		{"UnknownDisposition", result(forkengine.DispositionUnknown, "provider fork failed"), forkengine.StatusUnknown, "provider fork failed"},
		{"UnknownDispositionNoText", result(forkengine.DispositionUnknown, ""), forkengine.StatusUnknown, "provider fork delivery is unknown"},
		{"UnknownMissingDisposition", result("", ""), forkengine.StatusUnknown, "provider fork result was invalid: missing disposition"},
		{"UnknownTransportError", forkenginetest.ForkStep{Err: errors.New(`Post "http://admin:***@10.0.0.7:18697/fork": connection lost`)}, forkengine.StatusUnknown, "provider call failed"},
		{"UnknownAcceptedWithError", forkenginetest.ForkStep{Func: func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
			return forkenginetest.AcceptedResult(req), errors.New("read response body: EOF")
		}}, forkengine.StatusUnknown, "provider call failed"},
		{"UnknownAcceptedWithoutChild", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) { r.ProviderSessionID = " " })}, forkengine.StatusUnknown, "provider fork result was invalid: the child provider session id is empty"},
		{"UnknownAcceptedChildWithControlCharacter", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) { r.ProviderSessionID = "child\n1" })}, forkengine.StatusUnknown, "provider fork result was invalid: the child providerSessionId must be valid UTF-8 without control characters (invalid_id)"},
		{"UnknownAcceptedChildTooLong", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) { r.ProviderSessionID = strings.Repeat("x", forkengine.MaxTextLength+1) })}, forkengine.StatusUnknown, "provider fork result was invalid: the child providerSessionId is longer than 4096 bytes"},
		{"UnknownAcceptedChildIsSource", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) { r.ProviderSessionID = "provider-session-1" })}, forkengine.StatusUnknown, "provider fork result was invalid: the child provider session id is the source's"},
		{"UnknownAcceptedModeMismatch", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) { r.StateBindingMode = forkengine.BindingProviderOwned })}, forkengine.StatusUnknown, `provider fork result was invalid: binding mode "provider_owned" differs from the driver's "host_copy"`},
		{"UnknownHostCopyWithReceipt", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) { r.Receipt = "receipt" })}, forkengine.StatusUnknown, "provider fork result was invalid: a host_copy result carries turn bindings or a receipt"},
		{"UnknownHostCopyWithBindings", forkenginetest.ForkStep{Func: accepted(func(r *forkengine.ForkResult) {
			r.TurnBindings = []forkengine.TurnBinding{{ProviderTurnID: "p", Binding: []byte(`{"a":1}`)}}
		})}, forkengine.StatusUnknown, "provider fork result was invalid: a host_copy result carries turn bindings or a receipt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(7)
			h.driver.QueueFork(tc.step)
			op := h.forkAndProcess("request-1", "turn-7")
			require.Equal(t, tc.status, op.Status)
			require.Equal(t, tc.errorText, op.Error)
			require.Equal(t, 1, h.driver.ForkCalls())
			require.NotNil(t, op.DispatchedAt)
			if tc.status == forkengine.StatusCommitted {
				require.NotEmpty(t, op.TargetTurnID)
				return
			}
			require.NotNil(t, op.CompletedAt)
			again, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
			require.NoError(t, err)
			require.Equal(t, op, again, "a settled operation is never dispatched again")
			require.Equal(t, 1, h.driver.ForkCalls())
		})
	}
}

// provider_owned evidence must name one usable binding per bound snapshot turn and a receipt.
func TestDeliveryProviderOwnedEvidence(t *testing.T) {
	t.Parallel()
	owned := forkengine.Descriptor{Kind: "owned", Version: "v1", StateBindingMode: forkengine.BindingProviderOwned, ThroughTurn: true}
	mutated := func(mutate func(*forkengine.ForkResult)) forkenginetest.ForkStep {
		return forkenginetest.ForkStep{Func: func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
			res := forkenginetest.AcceptedResult(req)
			mutate(&res)
			return res, nil
		}}
	}
	tests := []struct {
		name   string
		step   forkenginetest.ForkStep
		status forkengine.OperationStatus
	}{
		{"OK", mutated(func(*forkengine.ForkResult) {}), forkengine.StatusCommitted},
		{"UnknownNoReceipt", mutated(func(r *forkengine.ForkResult) { r.Receipt = "" }), forkengine.StatusUnknown},
		{"UnknownMissingBinding", mutated(func(r *forkengine.ForkResult) { r.TurnBindings = r.TurnBindings[1:] }), forkengine.StatusUnknown},
		{"UnknownEmptyProviderTurnID", mutated(func(r *forkengine.ForkResult) { r.TurnBindings[0].ProviderTurnID = "" }), forkengine.StatusUnknown},
		{"UnknownEmptyBindingObject", mutated(func(r *forkengine.ForkResult) { r.TurnBindings[1].Binding = []byte(`{}`) }), forkengine.StatusUnknown},
		{"UnknownBindingNotObject", mutated(func(r *forkengine.ForkResult) { r.TurnBindings[1].Binding = []byte(`[1]`) }), forkengine.StatusUnknown},
		{"UnknownProviderTurnIDWithControlCharacter", mutated(func(r *forkengine.ForkResult) { r.TurnBindings[0].ProviderTurnID = "pt\x00" }), forkengine.StatusUnknown},
		{"UnknownProviderTurnIDTooLong", mutated(func(r *forkengine.ForkResult) {
			r.TurnBindings[1].ProviderTurnID = strings.Repeat("p", forkengine.MaxTextLength+1)
		}), forkengine.StatusUnknown},
		{"UnknownDuplicateProviderTurn", mutated(func(r *forkengine.ForkResult) { r.TurnBindings[1].ProviderTurnID = r.TurnBindings[0].ProviderTurnID }), forkengine.StatusUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.driver.SetDescriptor(owned, nil)
			h.seed(3)
			h.driver.QueueFork(tc.step)
			op := h.forkAndProcess("request-1", "turn-3")
			require.Equal(t, tc.status, op.Status, op.Error)
			require.Equal(t, 1, h.driver.ForkCalls())
		})
	}
}

// A Fork call that outlives DispatchTimeout is delivery unknown: it may have reached the provider.
func TestDeliveryTimeoutIsUnknown(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(cfg *forkengine.Config) { cfg.DispatchTimeout = time.Millisecond })
	h.seed(7)
	h.driver.QueueFork(forkenginetest.ForkStep{Func: func(ctx context.Context, _ forkengine.ForkRequest) (forkengine.ForkResult, error) {
		<-ctx.Done() // a provider that never answers
		return forkengine.ForkResult{}, ctx.Err()
	}})
	op := h.forkAndProcess("request-1", "turn-7")
	require.Equal(t, forkengine.StatusUnknown, op.Status)
	require.Equal(t, "provider fork timed out", op.Error)
	require.Equal(t, 1, h.driver.ForkCalls())
}

// Scenario 35: the caller hangs up while the provider forks; the acceptance is still recorded and
// committed.
func TestDeliveryCallerCancellationStillCommits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(7)
	op := h.mustFork("request-1", "turn-7")
	gate := make(chan struct{})
	h.driver.SetGate(gate)
	ctx, cancel := context.WithCancel(h.ctx)
	type outcome struct {
		op  forkengine.ForkOperation
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		got, err := h.engine.ProcessOperation(ctx, ws, op.ID)
		done <- outcome{got, err}
	}()
	<-h.driver.ForkEntered()
	require.Equal(t, forkengine.StatusDispatching, h.stored(op.ID).Status, "dispatching is persisted before the call")
	cancel()
	close(gate)
	got := <-done
	require.NoError(t, got.err)
	require.Equal(t, forkengine.StatusCommitted, got.op.Status)
	require.Equal(t, "child-"+op.ID, h.stored(op.ID).TargetProviderSessionID)
	require.Equal(t, 1, h.driver.ForkCalls())
}

// Scenario 36: the driver changed between prepare and dispatch, so the frozen promise no longer
// holds: the operation fails without a Fork call.
func TestDispatchVerification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(h *harness)
		error  string
	}{
		{"FailedDriverVersionDrift", func(h *harness) {
			desc := forkenginetest.ScriptedDescriptor
			desc.Version = "v2"
			h.driver.SetDescriptor(desc, nil)
		}, "fork driver changed from scripted/v1 to scripted/v2 since the fork was prepared (driver_drift)"},
		{"FailedDriverKindDrift", func(h *harness) {
			desc := forkenginetest.ScriptedDescriptor
			desc.Kind = "other"
			h.driver.SetDescriptor(desc, nil)
		}, "fork driver changed from scripted/v1 to other/v1 since the fork was prepared (driver_drift)"},
		{"FailedDriverNoLongerDescribes", func(h *harness) {
			h.driver.SetDescriptor(forkengine.Descriptor{}, errors.New("runtime gone"))
		}, `provider "scripted" cannot describe session "source-1"`}, // the cause goes to the log
		// Reports refuse both changes (provider_session_changed, provider_binding_changed); the
		// re-check still guards against a store changed behind the engine.
		{"FailedSourceProviderSessionChanged", func(h *harness) {
			h.rewriteSession(source, func(s *forkengine.Session) { s.ProviderSessionID = "provider-session-2" })
		}, "source provider session changed since the fork was prepared"},
		{"FailedBoundaryProviderTurnChanged", func(h *harness) {
			h.rewriteTurn("turn-7", func(t *forkengine.Turn) {
				t.ProviderTurnID, t.ProviderTurnBinding = "provider-turn-7b", json.RawMessage(`{"schemaVersion":2}`)
			})
		}, "boundary provider turn changed since the fork was prepared"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.seed(7)
			op := h.mustFork("request-1", "turn-7")
			tc.change(h)
			op = h.process(op)
			require.Equal(t, forkengine.StatusFailed, op.Status)
			require.Equal(t, tc.error, op.Error)
			require.Nil(t, op.DispatchedAt)
			require.Equal(t, 0, h.driver.ForkCalls())
		})
	}
}
