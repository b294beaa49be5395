package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

const (
	setForking = `mutation($ws: ID!, $on: Boolean!) { setWorkspaceForking(workspaceId: $ws, enabled: $on) {
		workspaceId forkingEnabled workspaceForkingEnabled serverForkingEnabled updatedAt } }`
	forkabilityQuery = `{ session(workspaceId: "w", id: "src") { lifecycleCapabilities { forkThroughTurn }
		latestTurn { providerForkBindingAvailable providerForkBindingState } } }`
)

type workspaceSettings struct {
	WorkspaceID                                                   string
	ForkingEnabled, WorkspaceForkingEnabled, ServerForkingEnabled bool
	UpdatedAt                                                     *string
}

type forkability struct {
	Session struct {
		LifecycleCapabilities struct{ ForkThroughTurn bool }
		LatestTurn            struct {
			ProviderForkBindingAvailable bool
			ProviderForkBindingState     string
		}
	}
}

// TestKillSwitchOverGraphQL: a workspace's switch turns forks off and on; while it is off the
// capability and the forkability read false without a driver call and forkSession is refused;
// another workspace is not touched.
func TestKillSwitchOverGraphQL(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: func(c *forkengine.Config) { c.NoBackground = true }})
	api.seedSession("w", "src", 2, "")

	var initial struct{ WorkspaceSettings workspaceSettings }
	api.mustDo(`{ workspaceSettings(workspaceId: "w") { workspaceId forkingEnabled workspaceForkingEnabled serverForkingEnabled updatedAt } }`,
		&initial, nil)
	require.Equal(t, workspaceSettings{WorkspaceID: "w", ForkingEnabled: true, WorkspaceForkingEnabled: true, ServerForkingEnabled: true},
		initial.WorkspaceSettings)

	var off struct{ SetWorkspaceForking workspaceSettings }
	api.mustDo(setForking, &off, map[string]any{"ws": "w", "on": false})
	require.False(t, off.SetWorkspaceForking.ForkingEnabled)
	require.False(t, off.SetWorkspaceForking.WorkspaceForkingEnabled)
	require.True(t, off.SetWorkspaceForking.ServerForkingEnabled)
	require.NotNil(t, off.SetWorkspaceForking.UpdatedAt)

	probes, describes := api.sim.ProbeCalls(), api.sim.DescribeCalls()
	var read forkability
	api.mustDo(forkabilityQuery, &read, nil)
	require.False(t, read.Session.LifecycleCapabilities.ForkThroughTurn)
	require.False(t, read.Session.LatestTurn.ProviderForkBindingAvailable)
	require.Equal(t, [2]int64{probes, describes}, [2]int64{api.sim.ProbeCalls(), api.sim.DescribeCalls()}, "no driver call")
	e := api.expectCode("FORK_UNSUPPORTED", forkMutation, map[string]any{"source": "src", "through": "src-t2", "req": "off"})
	require.Equal(t, forkengine.ReasonForkingDisabled, e.Extensions["reason"])

	api.seedSession("other", "src", 1, "")
	var other struct{ WorkspaceSettings workspaceSettings }
	api.mustDo(`{ workspaceSettings(workspaceId: "other") { workspaceId forkingEnabled } }`, &other, nil)
	require.True(t, other.WorkspaceSettings.ForkingEnabled, "the switch is per workspace")

	var on struct{ SetWorkspaceForking workspaceSettings }
	api.mustDo(setForking, &on, map[string]any{"ws": "w", "on": true})
	require.True(t, on.SetWorkspaceForking.ForkingEnabled)
	api.mustDo(forkabilityQuery, &read, nil)
	require.True(t, read.Session.LifecycleCapabilities.ForkThroughTurn)
	require.True(t, read.Session.LatestTurn.ProviderForkBindingAvailable)
	var started struct{ ForkSession forkOp }
	api.mustDo(forkMutation, &started, map[string]any{"source": "src", "through": "src-t2", "req": "on"})

	api.expectCode("BAD_USER_INPUT", setForking, map[string]any{"ws": " w", "on": false})
}
