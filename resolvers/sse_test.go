package resolvers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every event of a subscription must reach the client intact, also over a transport that encodes
// one event while it pulls the next (gqlgen's generated code reuses one buffer per stream).
func TestSSEEventsArriveIntact(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 2, "")
	var started struct{ ForkSession forkOp }
	api.mustDo(forkMutation, &started, map[string]any{"source": "src", "through": "src-t2", "req": "r1"})

	resp := api.postGraphQL(followSubscription, map[string]any{"id": started.ForkSession.ID}, "text/event-stream")
	require.Equal(t, http.StatusOK, resp.StatusCode)

	processed := make(chan error, 1)
	var phases []string
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		data, ok := strings.CutPrefix(scanner.Text(), "data: ")
		if !ok || strings.TrimSpace(data) == "" {
			continue
		}
		var frame struct {
			Data   struct{ ForkOperationUpdated forkOp }
			Errors []gqlError
		}
		require.NoError(t, json.Unmarshal([]byte(data), &frame), "event: %s", data)
		require.Empty(t, frame.Errors)
		phases = append(phases, frame.Data.ForkOperationUpdated.Phase)
		if len(phases) == 1 {
			go func() {
				_, err := api.engine.ProcessOperation(context.Background(), "w", started.ForkSession.LocalID)
				processed <- err
			}()
		}
	}
	require.NoError(t, <-processed)
	require.Equal(t, []string{"FROZEN", "DISPATCHING", "MATERIALIZING", "COMMITTED"}, phases)
}
