package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// TestPostgresInstancesShareTheKillSwitch: instance A switches forking off for a workspace and
// instance B, with its own pool, refuses the next fork and reads the capability as false at once;
// A switches it back on and B forks.
func TestPostgresInstancesShareTheKillSwitch(t *testing.T) {
	in := newTwoInstances(t)
	defer in.close(t)
	ctx := context.Background()
	in.seedSource(t, "src", 2)
	source, err := in.dbs[1].GetSession(ctx, "w", "src")
	require.NoError(t, err)
	_, err = in.engines[0].SetWorkspaceForking(ctx, "w", false)
	require.NoError(t, err)
	_, err = in.engines[1].StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t1", RequestID: "r1"})
	require.Equal(t, forkengine.ReasonForkingDisabled, forkengine.ErrorReason(err), "%v", err)
	require.False(t, in.engines[1].Capabilities(ctx, []forkengine.Session{source})[0].ForkThroughTurn)
	state, err := in.engines[1].Forking(ctx, "w")
	require.NoError(t, err)
	require.False(t, state.Enabled())

	_, err = in.engines[0].SetWorkspaceForking(ctx, "w", true)
	require.NoError(t, err)
	require.True(t, in.engines[1].Capabilities(ctx, []forkengine.Session{source})[0].ForkThroughTurn)
	_, err = in.engines[1].StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: "src-t1", RequestID: "r1"})
	require.NoError(t, err)
}

// TestPostgresInstancesRecoverOneBindingOnce: two instances fork the same unbound turn at once,
// each recovering its binding through its own pool; the binding is written once and there is one
// operation per boundary (its dispatch is the ordinary one: at most once, by its lease holder).
func TestPostgresInstancesRecoverOneBindingOnce(t *testing.T) {
	in := newTwoInstances(t)
	defer in.close(t)
	ctx := context.Background()
	in.seedSource(t, "src", 1)
	recovering := forkenginetest.ScriptedDescriptor
	recovering.RecoverBinding = true
	in.driver.SetDescriptor(recovering, nil)
	for i := range 20 {
		turn := fmt.Sprintf("unbound-%d", i)
		_, err := in.engines[0].ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: "src", ID: turn,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
			Submission: &forkengine.SubmissionReport{ClientSubmitID: "submit-" + turn, Content: forkengine.SubmissionMultimodal}})
		require.NoError(t, err)
	}
	found := forkenginetest.RecoverStep{Func: func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
		return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryFound, ProviderSessionID: req.Session.ProviderSessionID,
			ProviderTurnID: "pt-" + req.Proof.ClientSubmitID, ProviderTurnBinding: []byte(`{"found":true}`)}, nil
	}}
	for range 40 { // at most one recovery per instance and turn
		in.driver.QueueRecover(found)
	}
	for i := range 20 {
		turn := fmt.Sprintf("unbound-%d", i)
		ops := make([]forkengine.ForkOperation, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for j, e := range in.engines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in := forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src", ThroughTurnID: turn, RequestID: fmt.Sprintf("r-%d-%d", i, j)}
				ops[j], errs[j] = e.StartFork(ctx, in)
				if forkengine.ErrorCode(errs[j]) == forkengine.CodeForkInProgress {
					ops[j], errs[j] = e.StartFork(ctx, in)
				}
			}()
		}
		wg.Wait()
		require.NoError(t, errs[0], turn)
		require.NoError(t, errs[1], turn)
		require.Equal(t, ops[0].ID, ops[1].ID, "%s: one fork of the boundary", turn)
		stored, err := in.dbs[0].GetTurn(ctx, "w", turn)
		require.NoError(t, err)
		require.Equal(t, "pt-submit-"+turn, stored.ProviderTurnID)
		events, err := in.dbs[0].EventsAfter(ctx, "w", 0, 100000)
		require.NoError(t, err)
		upserts := 0
		for _, e := range events {
			if e.Kind == forkengine.EventTurnUpserted && e.TurnID == turn {
				upserts++
			}
		}
		require.Equal(t, 2, upserts, "%s: reported once, bound once", turn)
	}
}
