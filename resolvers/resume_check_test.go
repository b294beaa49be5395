package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

const verifyQuery = `query($id: ID!) { verifyForkedSession(workspaceId: "w", sessionId: $id) {
	status reason resumable session { id providerSessionId } lineage { operationId sourceSessionId }
	forkOperation { localId status targetSessionId } } }`

type verification struct {
	Status        string
	Reason        *string
	Resumable     bool
	Session       struct{ ID, ProviderSessionID string }
	Lineage       *struct{ OperationID, SourceSessionID string }
	ForkOperation *struct {
		LocalID, Status, TargetSessionID string
	}
}

// TestVerifyForkedSession: the resume check over GraphQL, for a committed fork's target (by local
// and by global id), an original session, a target moved to another provider session behind the
// engine, and a session that does not exist.
func TestVerifyForkedSession(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: func(c *forkengine.Config) { c.NoBackground = true }})
	api.seedSession("w", "src", 1, "")
	var started struct{ ForkSession forkOp }
	api.mustDo(forkMutation, &started, map[string]any{"source": "src", "through": "src-t1", "req": "resume"})
	op, err := api.engine.ProcessOperation(t.Context(), "w", started.ForkSession.LocalID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)

	for _, id := range []string{op.TargetSessionID, "Session:w:" + op.TargetSessionID} {
		var out struct{ VerifyForkedSession verification }
		api.mustDo(verifyQuery, &out, map[string]any{"id": id})
		v := out.VerifyForkedSession
		require.Equal(t, "VERIFIED", v.Status)
		require.True(t, v.Resumable)
		require.Nil(t, v.Reason)
		require.Equal(t, op.TargetProviderSessionID, v.Session.ProviderSessionID)
		require.Equal(t, op.ID, v.Lineage.OperationID)
		require.Equal(t, "COMMITTED", v.ForkOperation.Status)
	}
	var original struct{ VerifyForkedSession verification }
	api.mustDo(verifyQuery, &original, map[string]any{"id": "src"})
	require.Equal(t, "NOT_A_FORK", original.VerifyForkedSession.Status)
	require.True(t, original.VerifyForkedSession.Resumable)
	require.Nil(t, original.VerifyForkedSession.Lineage)

	target, err := api.db.GetSession(t.Context(), "w", op.TargetSessionID)
	require.NoError(t, err)
	target.ProviderSessionID = "moved-behind-the-engine"
	require.NoError(t, api.db.Update(t.Context(), func(tx forkengine.Tx) error { return tx.UpsertSession(t.Context(), target) }))
	var moved struct{ VerifyForkedSession verification }
	api.mustDo(verifyQuery, &moved, map[string]any{"id": op.TargetSessionID})
	require.Equal(t, "UNVERIFIED", moved.VerifyForkedSession.Status)
	require.False(t, moved.VerifyForkedSession.Resumable)
	require.Equal(t, forkengine.ReasonProviderSessionMismatch, *moved.VerifyForkedSession.Reason)

	api.expectCode("NOT_FOUND", verifyQuery, map[string]any{"id": "missing"})
	api.expectCode("BAD_USER_INPUT", verifyQuery, map[string]any{"id": "Turn:w:src-t1"})
}
