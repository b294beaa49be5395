package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Workspace isolation below the token check: in open mode (no tokens to refuse anything) an
// operation of workspace w is still invisible through another workspace, by id and in lists,
// and cannot be acknowledged from there. The store contract pins the same filter one layer down
// (forkenginetest's Isolation group).
func TestOperationsStayInTheirWorkspace(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("w", "src", 1, "")
	id := api.forkAndCommit("w", "src", "src-t1", "r1")

	var read struct {
		ForkOperation  *struct{ ID string }
		ForkOperations struct {
			TotalCount int
		}
	}
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "other", id: $id) { id }
		forkOperations(workspaceId: "other") { totalCount } }`, &read, map[string]any{"id": id})
	require.Nil(t, read.ForkOperation, "read through another workspace")
	require.Zero(t, read.ForkOperations.TotalCount)

	api.expectCode("NOT_FOUND", `mutation($id: ID!) { acknowledgeForkOperation(workspaceId: "other", id: $id) { id } }`,
		map[string]any{"id": id})
	op, err := api.engine.Operation(t.Context(), "w", id)
	require.NoError(t, err)
	require.Nil(t, op.AcknowledgedAt, "the refused acknowledgement changed nothing")
	require.Equal(t, forkengine.StatusCommitted, op.Status)
}
