package resolvers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
)

const forkWithTargetMutation = `mutation($req: ID!, $target: ForkTargetInput) {
  forkSession(input: {workspaceId: "w", sourceSessionId: "src", throughTurnId: "src-t2", requestId: $req, target: $target}) {
    localId status
  }
}`

const forkTargetQuery = `query($id: ID!) { forkOperation(workspaceId: "w", id: $id) {
  status target { model cwd settings runtimeContext } session { model cwd settings } } }`

// envRecorder is the simulated driver, remembering the dispatch-only values of each Fork call.
type envRecorder struct {
	*simulated.Driver
	mu   sync.Mutex
	seen []forkengine.ForkRequest
}

func (r *envRecorder) Fork(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req)
	r.mu.Unlock()
	return r.Driver.Fork(ctx, req)
}

// TestForkWithAnotherModel: a fork with a target overlay through GraphQL gives the child exactly
// the reference's settings and model and the prepared cwd; the operation shows what it froze; a
// replay with another overlay is request_conflict and bad target values are BAD_USER_INPUT, both
// leaving the database as it was; the environment reaches the provider's call and no byte of the
// SQLite database.
func TestForkWithAnotherModel(t *testing.T) {
	t.Parallel()
	recorder := &envRecorder{}
	api := newTestAPI(t, apiOptions{engine: func(c *forkengine.Config) {
		recorder.Driver = c.Drivers["simulated"].(*simulated.Driver)
		c.Drivers["simulated"] = recorder
	}})
	api.seedSession("w", "src", 2, `{"model":"gpt-a","browserUse":true,"simulated":{"models":["gpt-a","gpt-b"]}}`)
	const envMarker, refMarker, contextMarker = "env-secret-4e8f1a", "target-ref-b7c2d9", "context-fact-93ab"
	target := map[string]any{
		"settings":          map[string]any{"model": "gpt-b", "reasoningEffort": "high"},
		"cwd":               " /prepared-project ",
		"runtimeContext":    map[string]any{"isolation": map[string]any{"mode": "worktree", "worktreeId": "worktree-1"}, "fact": contextMarker},
		"environment":       []map[string]any{{"name": "API_TOKEN", "value": envMarker}},
		"providerTargetRef": refMarker,
	}
	var started struct {
		ForkSession struct{ LocalID, Status string }
	}
	api.mustDo(forkWithTargetMutation, &started, map[string]any{"req": "r1", "target": target})
	require.Equal(t, "ACCEPTED", started.ForkSession.Status)
	closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, api.engine.Close(closeCtx), "waits for the background dispatch and commit")

	var got struct {
		ForkOperation struct {
			Status string
			Target struct {
				Model, Cwd     string
				Settings       json.RawMessage
				RuntimeContext json.RawMessage
			}
			Session struct {
				Model, Cwd string
				Settings   json.RawMessage
			}
		}
	}
	api.mustDo(forkTargetQuery, &got, map[string]any{"id": started.ForkSession.LocalID})
	op := got.ForkOperation
	require.Equal(t, "COMMITTED", op.Status)
	want := `{"model":"gpt-b","reasoningEffort":"high","simulated":{"models":["gpt-a","gpt-b"]}}` // browserUse removed
	require.JSONEq(t, want, string(op.Session.Settings))
	require.Equal(t, "gpt-b", op.Session.Model)
	require.Equal(t, "/prepared-project", op.Session.Cwd)
	require.JSONEq(t, want, string(op.Target.Settings))
	require.Equal(t, "gpt-b", op.Target.Model)
	require.Contains(t, string(op.Target.RuntimeContext), `"worktreeId":"worktree-1"`)

	recorder.mu.Lock()
	require.Len(t, recorder.seen, 1)
	require.Equal(t, []forkengine.EnvironmentVariable{{Name: "API_TOKEN", Value: envMarker}}, recorder.seen[0].Environment)
	require.Equal(t, refMarker, recorder.seen[0].ProviderTargetRef)
	require.Equal(t, "gpt-b", recorder.seen[0].Target.Model)
	recorder.mu.Unlock()

	before := api.tableDigest()
	other := map[string]any{"settings": map[string]any{"model": "gpt-a", "reasoningEffort": "high"},
		"cwd": "/prepared-project", "runtimeContext": target["runtimeContext"]}
	conflict := api.expectCode("FORK_CONFLICT", forkWithTargetMutation, map[string]any{"req": "r1", "target": other})
	require.Equal(t, "request_conflict", conflict.Extensions["reason"])
	for name, bad := range map[string]struct {
		target map[string]any
		reason string
	}{
		"context not an object": {map[string]any{"runtimeContext": []int{1}}, "invalid_target"},
		"environment name":      {map[string]any{"environment": []map[string]any{{"name": "A-B", "value": envMarker}}}, "invalid_target"},
		"model":                 {map[string]any{"settings": map[string]any{"model": " gpt"}}, "invalid_id"},
	} {
		refused := api.expectCode("BAD_USER_INPUT", forkWithTargetMutation, map[string]any{"req": "r-" + name, "target": bad.target})
		require.Equal(t, bad.reason, refused.Extensions["reason"], name)
		require.NotContains(t, refused.Message, envMarker, "an environment value is never quoted")
	}
	require.Equal(t, before, api.tableDigest(), "refusals change nothing")

	files, err := filepath.Glob(api.dbCfg.DSN + "*") // the database and its WAL
	require.NoError(t, err)
	var bytes strings.Builder
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		bytes.Write(raw)
	}
	require.Contains(t, bytes.String(), contextMarker, "the frozen runtime context is stored (the search works)")
	require.NotContains(t, bytes.String(), envMarker)
	require.NotContains(t, bytes.String(), refMarker)
}
