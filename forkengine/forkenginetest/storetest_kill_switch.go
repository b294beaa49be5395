package forkenginetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// killSwitchTests: the kill switch (reference §8 "Feature flag", scenarios 59 and 67) stops new
// forks per workspace, kept in the store so every instance on it agrees at once, and for the
// whole server, while reads, acknowledgements, reconciliation and forks already started go on.
func killSwitchTests() map[string]storeTest {
	return map[string]storeTest{
		"SettingsRoundTrip": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			got, err := s.WorkspaceSettingsByIDs(ctx, []string{wsA, wsB})
			require.NoError(t, err)
			require.Empty(t, got, "no row: the defaults")
			want := forkengine.WorkspaceSettings{WorkspaceID: wsA, ForkingDisabled: true, UpdatedAt: at(5)}
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertWorkspaceSettings(ctx, want) })
			got, err = s.WorkspaceSettingsByIDs(ctx, []string{wsA, wsB})
			require.NoError(t, err)
			require.Equal(t, map[string]forkengine.WorkspaceSettings{wsA: want}, got)
			want.ForkingDisabled, want.UpdatedAt = false, at(6)
			update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.UpsertWorkspaceSettings(ctx, want) })
			got, err = s.WorkspaceSettingsByIDs(ctx, []string{wsA})
			require.NoError(t, err)
			require.Equal(t, want, got[wsA])
		},
		// 59. Given forking switched off for the workspace, when a new fork is requested, then it
		// is FORK_UNSUPPORTED forking_disabled, no operation is made and no driver is asked;
		// everything already started goes on, and so do the other workspaces.
		"Scenario59_ForkingDisabledRefusesNewForksOnly": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-6", forkengine.PhaseSettled, true, nil)
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			committed, err := r.fork("request-committed", "turn-6")
			require.NoError(t, err)
			committed = r.process(committed)
			running, err := r.fork("request-running", "turn-7") // prepared: started before the switch
			require.NoError(t, err)
			reconciling := ScriptedDescriptor
			reconciling.RecoverBinding, reconciling.Reconcile = true, true
			r.driver.SetDescriptor(reconciling, nil)
			r.turn("turn-5", forkengine.PhaseSettled, true, nil)
			r.driver.QueueFork(ForkStep{Result: forkengine.ForkResult{Disposition: forkengine.DispositionUnknown, Error: "lost"}})
			lost, err := r.fork("request-lost", "turn-5")
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusUnknown, r.process(lost).Status)
			calls, ops := r.driverCalls(), r.operations()

			state, err := r.engine.SetWorkspaceForking(r.ctx, scenarioWS, false)
			require.NoError(t, err)
			require.False(t, state.Enabled())
			require.True(t, state.Workspace.ForkingDisabled)
			// Another instance on the same store: the setting is in the database, not in a process.
			other := newScenarioRig(t, s, func(c *forkengine.Config) { c.InstanceID = "other-instance" })
			for _, rig := range []*scenarioRig{r, other} {
				_, err = rig.fork("request-new", "turn-7")
				requireReason(t, err, forkengine.CodeForkUnsupported, forkengine.ReasonForkingDisabled)
			}
			require.Equal(t, ops, r.operations(), "no operation")
			require.Equal(t, calls, r.driverCalls(), "no driver call")
			require.Zero(t, other.driverCalls())

			replayed, err := r.fork("request-running", "turn-7")
			require.NoError(t, err, "a replay starts nothing, so it still answers")
			require.Equal(t, running.ID, replayed.ID)
			require.Equal(t, forkengine.StatusCommitted, r.process(running).Status, "a fork already started finishes")
			_, err = r.engine.Acknowledge(r.ctx, scenarioWS, committed.ID, "operator")
			require.NoError(t, err, "acknowledgements go on")
			_, err = r.engine.Operation(r.ctx, scenarioWS, committed.ID)
			require.NoError(t, err, "reads go on")
			r.driver.QueueReconcile(ReconcileStep{Result: forkengine.ReconcileResult{Answer: forkengine.ReconcileFound,
				ProviderSessionID: "child-" + lost.ID, StateBindingMode: forkengine.BindingHostCopy}})
			reconciled, err := r.engine.ReconcileForkOperation(r.ctx, scenarioWS, lost.ID)
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, reconciled.Status, "reconciliation goes on: %s", reconciled.Error)

			// The other workspace forks as before.
			psid := "provider-session-elsewhere"
			_, err = r.engine.ReportSession(r.ctx, forkengine.SessionReport{WorkspaceID: "workspace-2", ID: "s", Provider: scenarioProvider,
				ProviderSessionID: &psid})
			require.NoError(t, err)
			_, err = r.engine.ReportTurn(r.ctx, forkengine.TurnReport{WorkspaceID: "workspace-2", SessionID: "s", ID: "t",
				Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: strPtr("pt"),
				ProviderTurnBinding: []byte(`{"a":1}`)})
			require.NoError(t, err)
			_, err = r.engine.StartFork(r.ctx, forkengine.ForkInput{WorkspaceID: "workspace-2", SourceSessionID: "s",
				ThroughTurnID: "t", RequestID: "request-elsewhere"})
			require.NoError(t, err)

			state, err = other.engine.SetWorkspaceForking(r.ctx, scenarioWS, true)
			require.NoError(t, err)
			require.True(t, state.Enabled())
			_, err = r.fork("request-after", "turn-7")
			require.NoError(t, err, "switched back on, from another instance")
		},
		// 67. Given forking off, when a client reads the source, then forkThroughTurn and every
		// turn's availability are false without a driver call; with forking on, a fork is refused
		// through a turn that needs a binding recovery cannot give, and allowed while the source
		// has an active turn.
		"Scenario67_ForkRefusedWhenCapabilityIsOffOrRecoveryRequired": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			source := r.source()
			r.turn("turn-6", forkengine.PhaseSettled, false, nil) // RECOVERY_REQUIRED, no proof
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			r.turn("turn-8", forkengine.PhaseRunning, false, nil) // the source is busy
			require.True(t, r.engine.Capabilities(r.ctx, []forkengine.Session{source})[0].ForkThroughTurn)
			require.True(t, r.forkable("turn-7"))

			_, err := r.engine.SetWorkspaceForking(r.ctx, scenarioWS, false)
			require.NoError(t, err)
			describes, probes := r.driver.DescribeCalls(), r.driver.ProbeBatches()
			require.Equal(t, forkengine.LifecycleCapabilities{}, r.engine.Capabilities(r.ctx, []forkengine.Session{source})[0])
			require.False(t, r.forkable("turn-7"))
			require.Equal(t, [2]int{describes, probes}, [2]int{r.driver.DescribeCalls(), r.driver.ProbeBatches()},
				"no probe and no describe while forking is off")
			_, err = r.fork("request-off", "turn-7")
			requireReason(t, err, forkengine.CodeForkUnsupported, forkengine.ReasonForkingDisabled)

			_, err = r.engine.SetWorkspaceForking(r.ctx, scenarioWS, true)
			require.NoError(t, err)
			_, err = r.fork("request-recovery", "turn-6")
			requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonProviderTurnMissing)
			op, err := r.fork("request-busy", "turn-7")
			require.NoError(t, err, "a settled turn forks while a newer one runs")
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
		},
		"ServerSwitchStopsEveryWorkspace": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s, func(c *forkengine.Config) { c.ForkingDisabled = true })
			source := r.source()
			r.turn("turn-7", forkengine.PhaseSettled, true, nil)
			_, err := r.fork("request-1", "turn-7")
			requireReason(t, err, forkengine.CodeForkUnsupported, forkengine.ReasonForkingDisabled)
			require.Equal(t, forkengine.LifecycleCapabilities{}, r.engine.Capabilities(r.ctx, []forkengine.Session{source})[0])
			require.False(t, r.forkable("turn-7"))
			require.Zero(t, r.driverCalls())
			state, err := r.engine.SetWorkspaceForking(r.ctx, scenarioWS, true)
			require.NoError(t, err)
			require.False(t, state.Enabled(), "the workspace's setting cannot override the server's")
			require.True(t, state.ServerDisabled)
			_, err = r.engine.Forking(r.ctx, " bad")
			requireReason(t, err, forkengine.CodeInvalid, forkengine.ReasonInvalidID)
		},
	}
}
