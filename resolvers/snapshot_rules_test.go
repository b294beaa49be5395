package resolvers_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A fork's child shows the audit messages placed before its boundary, read through its history
// under ids of its own, which node(id:) finds; one placed after the boundary it never shows.
func TestAuditMessagesOfAForkedChild(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	ctx := context.Background()
	api.seedSession("w", "src", 1, "")
	report := func(id, content string) {
		_, err := api.engine.ReportAuditMessage(ctx, forkengine.AuditReport{WorkspaceID: "w", SessionID: "src", ID: id,
			Kind: "model_changed", Content: content})
		require.NoError(t, err)
	}
	report("before", "model gpt-b")
	api.seedTurn("w", "src", "src-t2", forkengine.PhaseSettled)
	report("after", "model gpt-c")
	opID := api.forkAndCommit("w", "src", "src-t2", "req-fork")
	op, err := api.engine.Reader().GetOperation(ctx, "w", opID)
	require.NoError(t, err)
	type audit struct {
		ID, LocalID, SessionID, Content string
		AfterSequence                   int
	}
	var out struct {
		Session struct{ AuditMessages []audit }
	}
	api.mustDo(`query($id: ID!) { session(workspaceId: "w", id: $id) { auditMessages { id localId sessionId content afterSequence } } }`,
		&out, map[string]any{"id": op.TargetSessionID})
	require.Len(t, out.Session.AuditMessages, 1)
	got := out.Session.AuditMessages[0]
	require.Equal(t, "model gpt-b", got.Content)
	require.Equal(t, 1, got.AfterSequence)
	require.Equal(t, op.TargetSessionID, got.SessionID)
	require.NotEqual(t, "before", got.LocalID)
	var node struct {
		Node struct{ SessionID, Content string }
	}
	api.mustDo(`query($id: ID!) { node(id: $id) { ... on AuditMessage { sessionId content } } }`, &node, map[string]any{"id": got.ID})
	require.Equal(t, op.TargetSessionID, node.Node.SessionID)
	require.Equal(t, "model gpt-b", node.Node.Content)
}

const reportRuntimeContextMutation = `mutation($rc: JSON, $title: String) { reportSession(input: {workspaceId: "w",
	id: "s1", provider: "simulated", title: $title, runtimeContext: $rc}) { title runtimeContext } }`

// A session's runtime context is reported with reportSession, projected on Session, kept by a
// report that omits it, and refused unless it is a JSON object, with nothing changed.
func TestSessionRuntimeContext(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	var s struct {
		ReportSession struct {
			Title          string
			RuntimeContext map[string]any
		}
	}
	api.mustDo(reportRuntimeContextMutation, &s, map[string]any{"title": "first"})
	require.Nil(t, s.ReportSession.RuntimeContext, "none reported: null")
	worktree := map[string]any{"isolation": map[string]any{"mode": "worktree", "worktreeId": "worktree-1"}}
	api.mustDo(reportRuntimeContextMutation, &s, map[string]any{"rc": worktree})
	require.Equal(t, worktree, s.ReportSession.RuntimeContext)
	api.mustDo(reportRuntimeContextMutation, &s, map[string]any{"title": "second"})
	require.Equal(t, worktree, s.ReportSession.RuntimeContext, "omitted: kept")
	before := api.tableDigest()
	for _, bad := range []any{[]int{1}, "worktree", 3} {
		api.expectCode("BAD_USER_INPUT", reportRuntimeContextMutation, map[string]any{"rc": bad, "title": "changed"})
	}
	require.Equal(t, before, api.tableDigest(), "refusals change nothing")
}
