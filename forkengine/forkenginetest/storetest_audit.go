package forkenginetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// auditTests: a session's turn-less audit messages are placed after the latest turn, reported
// idempotently, and a fork inherits those placed before its boundary, copied under its own ids,
// unchanged by later reports to the source or its purge.
func auditTests() map[string]storeTest {
	return map[string]storeTest{
		"GivenAuditReports_WhenRead_ThenPlacedAfterTheLatestTurnAndIdempotent": testAuditReports,
		"GivenAuditMessages_WhenForked_ThenChildHasThoseBeforeTheBoundary":     testAuditInherited,
	}
}

func (f *historyFixture) audit(session, id, content string) (forkengine.AuditMessage, error) {
	return f.engine.ReportAuditMessage(f.ctx, forkengine.AuditReport{WorkspaceID: historyWS, SessionID: session, ID: id,
		Kind: "model_changed", Content: content})
}

func (f *historyFixture) auditsOf(session string) []forkengine.AuditMessage {
	f.t.Helper()
	got, err := f.store.AuditMessagesBySessionIDs(f.ctx, historyWS, []string{session})
	require.NoError(f.t, err)
	return got[session]
}

func testAuditReports(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	first, err := f.audit("src", "a0", "model gpt-a")
	require.NoError(t, err)
	require.Equal(t, int64(0), first.AfterSequence)
	f.addTurns("src", 1, 2)
	second, err := f.audit("src", "a2", "model gpt-b")
	require.NoError(t, err)
	require.Equal(t, int64(2), second.AfterSequence)
	events := f.eventCount()
	again, err := f.audit("src", "a2", "model gpt-b")
	require.NoError(t, err)
	require.Equal(t, second, again)
	require.Equal(t, events, f.eventCount(), "an identical report publishes nothing")
	_, err = f.audit("src", "a2", "other")
	requireReason(t, err, forkengine.CodeInvalid, forkengine.ReasonMessageConflict)
	_, err = f.audit("missing", "a9", "x")
	requireReason(t, err, forkengine.CodeNotFound, "")
	require.Equal(t, []forkengine.AuditMessage{first, second}, f.auditsOf("src"))
	byID, err := s.AuditMessagesByIDs(f.ctx, historyWS, []string{"a0", "nope"})
	require.NoError(t, err)
	require.Equal(t, map[string]forkengine.AuditMessage{"a0": first}, byID)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, historyWS, "src") })
	require.Empty(t, f.auditsOf("src"))
}

func testAuditInherited(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 1)
	_, err := f.audit("src", "before", "model gpt-b") // after turn 1: before a boundary at turn 2
	require.NoError(t, err)
	f.addTurns("src", 2, 2)
	_, err = f.audit("src", "after", "model gpt-c") // after turn 2: not part of a fork through it
	require.NoError(t, err)
	f.fork("src", "src-t2", "child")
	child := f.auditsOf("child")
	require.Len(t, child, 1)
	require.Equal(t, "model gpt-b", child[0].Content)
	require.Equal(t, "child", child[0].SessionID)
	require.Equal(t, int64(1), child[0].AfterSequence)
	require.NotEqual(t, "before", child[0].ID)
	_, err = f.audit("src", "later", "model gpt-d")
	require.NoError(t, err)
	f.fork("child", f.read("child").Turns[1].ID, "grandchild")
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, historyWS, "src") })
	require.Equal(t, child, f.auditsOf("child"), "later reports and the purge of the source never change the child")
	grand := f.auditsOf("grandchild")
	require.Len(t, grand, 1)
	require.Equal(t, "model gpt-b", grand[0].Content)
}
