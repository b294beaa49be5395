package forkenginetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// providerAnswerTests: a provider's answer is data. Whatever text it carries (a NUL, invalid
// UTF-8, a megabyte, escape sequences) every store records the answer, bounded and cleaned, and
// evidence no store could keep (a receipt or binding with a NUL, a descriptor version with one)
// makes the answer invalid instead of failing the write.
func providerAnswerTests() map[string]storeTest {
	return map[string]storeTest{
		"RejectionWithHostileTextIsRecordedBounded": func(t *testing.T, s forkengine.Store) {
			d := NewScriptedDriver()
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			d.QueueFork(ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionRejected,
				Error: "a\x00b \x1b[31mred\xff " + strings.Repeat("z", 1<<20)}})
			op := startAndProcess(t, e, "rejected")
			require.Equal(t, forkengine.StatusFailed, op.Status, "a rejection is a failure, never left dispatching")
			requireCleanProviderText(t, op.Error, "ab [31mred\ufffd z")
			stored, err := s.GetOperation(context.Background(), wsA, op.ID)
			require.NoError(t, err)
			require.Equal(t, op.Error, stored.Error, "the bounded text is what the store holds")
		},
		"ReconcileAnswerWithHostileTextIsRecordedAndCounted": func(t *testing.T, s forkengine.Store) {
			d := reconcilingDriver()
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			op := unknownOperation(t, e, d, "unknown")
			d.QueueReconcile(ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown,
				Error: "still\x00 looking " + strings.Repeat("y", 900<<10)}})
			got, err := e.ReconcileForkOperation(context.Background(), wsA, op.ID)
			require.NoError(t, err, "the answer is recorded, so the attempt is not an error to retry at every sweep")
			require.Equal(t, forkengine.StatusUnknown, got.Status)
			require.Equal(t, 1, got.ReconcileAttempts, "the attempt is counted")
			require.NotNil(t, got.NextReconcileAt, "the next attempt is scheduled")
			requireCleanProviderText(t, got.Error, "still looking y")
			stored, err := s.GetOperation(context.Background(), wsA, op.ID)
			require.NoError(t, err)
			require.Equal(t, got.Error, stored.Error)
			require.Equal(t, 1, stored.ReconcileAttempts)
		},
		"AbsentWithHostileTextFailsTheOperation": func(t *testing.T, s forkengine.Store) {
			d := reconcilingDriver()
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			op := unknownOperation(t, e, d, "unknown")
			d.QueueReconcile(ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileAbsent,
				Error: "\x00no child\u202e"}})
			got, err := e.ReconcileForkOperation(context.Background(), wsA, op.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusFailed, got.Status)
			require.Equal(t, forkengine.ReasonReconciledAbsent, got.ErrorReason)
			require.Equal(t, "no child", got.Error)
		},
		"EvidenceNoStoreCouldKeepIsAnInvalidResult": func(t *testing.T, s forkengine.Store) {
			d := NewScriptedDriver()
			desc := ScriptedDescriptor
			desc.StateBindingMode = forkengine.BindingProviderOwned
			d.SetDescriptor(desc, nil)
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			for name, spoil := range map[string]func(*forkengine.ForkResult){
				"receipt": func(r *forkengine.ForkResult) { r.Receipt = "receipt\x00" },
				"binding": func(r *forkengine.ForkResult) { r.TurnBindings[0].Binding = json.RawMessage("{\"a\":\"\xff\"}") },
				"binding size": func(r *forkengine.ForkResult) {
					r.TurnBindings[0].Binding = json.RawMessage(`{"a":"` + strings.Repeat("x", forkengine.MaxJSONBytes) + `"}`)
				},
			} {
				d.QueueFork(ForkStep{Func: func(_ context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
					res := AcceptedResult(req)
					spoil(&res)
					return res, nil
				}})
				op := startAndProcess(t, e, "spoiled-"+strings.ReplaceAll(name, " ", "-"))
				require.Equal(t, forkengine.StatusUnknown, op.Status, "%s: evidence that cannot be kept is unverifiable", name)
				require.Contains(t, op.Error, "provider fork result was invalid", name)
				requireCleanProviderText(t, op.Error, "")
			}
		},
		"DescriptorNoStoreCouldKeepIsUnsupported": func(t *testing.T, s forkengine.Store) {
			d := NewScriptedDriver()
			desc := ScriptedDescriptor
			desc.Version = "v1\x00"
			d.SetDescriptor(desc, nil)
			e := hostileEngineWith(t, s, d)
			seedHostileBase(t, e)
			before := storeState(t, s, wsA)
			_, err := e.StartFork(context.Background(), forkengine.ForkInput{WorkspaceID: wsA, SourceSessionID: "base",
				ThroughTurnID: "base-t1", RequestID: "r"})
			require.Equal(t, forkengine.CodeForkUnsupported, forkengine.ErrorCode(err), "%v", err)
			require.Equal(t, before, storeState(t, s, wsA), "no operation is created")
		},
	}
}

// reconcilingDriver is a ScriptedDriver whose descriptor says it can reconcile.
func reconcilingDriver() *ScriptedDriver {
	d := NewScriptedDriver()
	desc := ScriptedDescriptor
	desc.Reconcile = true
	d.SetDescriptor(desc, nil)
	return d
}

// startAndProcess starts a fork of "base" through "base-t1" and drives it as far as it goes.
func startAndProcess(t *testing.T, e *forkengine.Engine, requestID string) forkengine.ForkOperation {
	t.Helper()
	ctx := context.Background()
	op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: wsA, SourceSessionID: "base", ThroughTurnID: "base-t1",
		RequestID: requestID, TargetSessionID: "target-" + requestID})
	require.NoError(t, err)
	op, err = e.ProcessOperation(ctx, wsA, op.ID)
	require.NoError(t, err)
	return op
}

// requireCleanProviderText checks a stored provider text: within MaxProviderTextBytes, valid
// UTF-8, no control characters but newline and tab, and starting with prefix.
func requireCleanProviderText(t *testing.T, text, prefix string) {
	t.Helper()
	require.LessOrEqual(t, len(text), forkengine.MaxProviderTextBytes, "the text is bounded")
	require.True(t, utf8.ValidString(text), "the text is valid UTF-8")
	for _, r := range text {
		require.False(t, r < 0x20 && r != '\n' && r != '\t' || r == 0x7f, "control character %U kept in %.60q", r, text)
	}
	require.True(t, strings.HasPrefix(text, prefix), "%.80q starts with %q", text, prefix)
}
