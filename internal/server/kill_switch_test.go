package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/servertest"
)

// TestServerWithForkingOff runs the real server with -forking=false: the demo workspace reads,
// its capabilities read false, a fork is refused with forking_disabled, and the workspace's
// settings say it is the server's switch.
func TestServerWithForkingOff(t *testing.T) {
	t.Parallel()
	base, _ := startServer(t, filepath.Join(t.TempDir(), "forkgraph.db"), "-forking=false")
	var read struct {
		Session struct {
			LifecycleCapabilities struct{ ForkThroughTurn bool }
			LatestTurn            struct{ ProviderForkBindingAvailable bool }
		}
		WorkspaceSettings struct {
			ForkingEnabled, WorkspaceForkingEnabled, ServerForkingEnabled bool
		}
	}
	servertest.Client{T: t, Base: base}.Must(`{ session(workspaceId: "demo", id: "lisbon-trip") { lifecycleCapabilities { forkThroughTurn }
		latestTurn { providerForkBindingAvailable } }
		workspaceSettings(workspaceId: "demo") { forkingEnabled workspaceForkingEnabled serverForkingEnabled } }`, nil, &read)
	require.False(t, read.Session.LifecycleCapabilities.ForkThroughTurn)
	require.False(t, read.Session.LatestTurn.ProviderForkBindingAvailable)
	require.Equal(t, struct{ ForkingEnabled, WorkspaceForkingEnabled, ServerForkingEnabled bool }{false, true, false},
		read.WorkspaceSettings)

	body, err := json.Marshal(map[string]any{"query": `mutation { forkSession(input: {workspaceId: "demo",
		sourceSessionId: "lisbon-trip", throughTurnId: "lisbon-trip-t2", requestId: "off"}) { id } }`})
	require.NoError(t, err)
	resp, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var answer struct {
		Errors []struct {
			Extensions struct{ Code, Reason string }
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
	require.Len(t, answer.Errors, 1)
	require.Equal(t, "FORK_UNSUPPORTED", answer.Errors[0].Extensions.Code)
	require.Equal(t, "forking_disabled", answer.Errors[0].Extensions.Reason)
}
