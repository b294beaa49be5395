package forkenginetest

import (
	"context"
	"errors"
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
		// Reference §6.1: audit messages up to the boundary, frozen at prepare.
		"GivenAPreparedFork_WhenAnAuditMessageIsStoredAfterPrepare_ThenTheChildNeverSeesIt": testAuditAfterPrepare,
		// Shared history: read through the reference, remapped where read, never copied.
		"GivenASharedChild_WhenItsAuditMessagesAreRead_ThenPresentedThroughItsHistory":   testAuditPresented,
		"GivenAThreeDeepChain_WhenAncestorsArePurged_ThenEveryForkKeepsItsAuditMessages": testAuditChainPurged,
		"GivenASnapshotFrozenWithAuditCopies_WhenCommitted_ThenReadThroughTheHistory":    testAuditLegacySnapshot,
		// Reference §9 scenario 56: the session-audit message is part of the child's transcript,
		// in the source's order.
		"Scenario56_GivenAnAuditMessageBetweenTurns_WhenForked_ThenTheChildShowsItInSourceOrder": testAuditMessageOrder,
		// §6.2: an empty id in the prefix fails the fork closed at prepare.
		"GivenAPrefixAuditMessageWithAnEmptyID_WhenForked_ThenFailedClosedBeforeTheProvider": testAuditEmptyID,
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

// sourceAudits are the contents of a session's audit messages, in order.
func auditContents(ms []forkengine.AuditMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Content
	}
	return out
}

func testAuditAfterPrepare(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 1)
	_, err := f.audit("src", "kept", "model gpt-b")
	require.NoError(t, err)
	f.addTurns("src", 2, 2)
	op, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: "src",
		ThroughTurnID: "src-t2", RequestID: "req-child", TargetSessionID: "child"})
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusPrepared, op.Status)
	// A report after prepare is placed after turn 2, outside the prefix anyway; a row placed
	// inside it (a runtime that backfills a notice; written here below the engine) is above the
	// snapshot's bound on the history clock: neither reaches the child.
	_, err = f.audit("src", "reported-later", "model gpt-c")
	require.NoError(t, err)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		_, err := tx.AppendAuditMessages(ctx, []forkengine.AuditMessage{{WorkspaceID: historyWS, SessionID: "src",
			ID: "backfilled", AfterSequence: 1, Kind: "model_changed", Content: "model gpt-z", CreatedAt: f.clock()}})
		return err
	})
	require.Equal(t, []string{"model gpt-b", "model gpt-z", "model gpt-c"}, auditContents(f.auditsOf("src")),
		"the backfilled one is placed after turn 1, after the first")
	op, err = f.engine.ProcessOperation(f.ctx, historyWS, op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
	require.Equal(t, []string{"model gpt-b"}, auditContents(f.auditsOf("child")))
}

func testAuditPresented(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 1)
	a0, err := f.audit("src", "a0", "model gpt-a")
	require.NoError(t, err)
	f.addTurns("src", 2, 2)
	f.fork("src", "src-t2", "child")
	h, found, err := s.HistoryOf(f.ctx, historyWS, "child")
	require.NoError(t, err)
	require.True(t, found)
	require.GreaterOrEqual(t, h.AuditBound, a0.Position, "the bound is the clock at prepare")
	want := forkengine.PresentAuditMessage(h, nil, a0)
	require.Equal(t, []forkengine.AuditMessage{want}, f.auditsOf("child"), "presented: the child's session and id, the source's fields")
	require.Equal(t, "child", want.SessionID)
	require.NotEqual(t, a0.ID, want.ID)
	byID, err := s.AuditMessagesByIDs(f.ctx, historyWS, []string{want.ID, a0.ID})
	require.NoError(t, err)
	require.Equal(t, map[string]forkengine.AuditMessage{want.ID: want, a0.ID: a0}, byID, "node(id:) finds the presented id")
	// Reported again under the id the child shows, it is the same message: a no-op.
	again, err := f.engine.ReportAuditMessage(f.ctx, forkengine.AuditReport{WorkspaceID: historyWS, SessionID: "child",
		ID: want.ID, Kind: want.Kind, Content: want.Content})
	require.NoError(t, err)
	require.Equal(t, want, again)
	own, err := f.audit("child", "c2", "model gpt-c")
	require.NoError(t, err)
	require.Equal(t, int64(2), own.AfterSequence)
	require.Equal(t, []forkengine.AuditMessage{want, own}, f.auditsOf("child"))
	require.Equal(t, []forkengine.AuditMessage{a0}, f.auditsOf("src"), "the child's own never reach the source")
	// A grandchild presents what its parent showed: the id is derived from the parent's.
	f.addTurns("child", 3, 3)
	f.fork("child", "child-t3", "grand")
	gh, _, err := s.HistoryOf(f.ctx, historyWS, "grand")
	require.NoError(t, err)
	got := f.auditsOf("grand")
	require.Equal(t, []string{"model gpt-a", "model gpt-c"}, auditContents(got))
	require.Equal(t, forkengine.PresentAuditMessage(gh, nil, want).ID, got[0].ID, "presented through the parent's key")
	require.Equal(t, forkengine.PresentAuditMessage(gh, nil, own).ID, got[1].ID)
}

func testAuditChainPurged(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("c0", 1)
	_, err := f.audit("c0", "n0", "notice 0")
	require.NoError(t, err)
	f.addTurns("c0", 2, 2)
	f.fork("c0", "c0-t2", "c1")
	_, err = f.audit("c1", "n1", "notice 1")
	require.NoError(t, err)
	f.addTurns("c1", 3, 3)
	f.fork("c1", "c1-t3", "c2")
	_, err = f.audit("c2", "n2", "notice 2")
	require.NoError(t, err)
	f.addTurns("c2", 4, 4)
	f.fork("c2", "c2-t4", "c3")
	before := map[string][]forkengine.AuditMessage{}
	for _, id := range []string{"c1", "c2", "c3"} {
		before[id] = f.auditsOf(id)
	}
	require.Equal(t, []string{"notice 0", "notice 1", "notice 2"}, auditContents(before["c3"]))
	for _, purged := range []string{"c1", "c0"} { // the middle first, then the root
		update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, historyWS, purged) })
		for _, id := range []string{"c2", "c3"} {
			require.Equal(t, before[id], f.auditsOf(id), "%s after the purge of %s", id, purged)
		}
	}
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, historyWS, "c2") })
	require.Equal(t, before["c3"], f.auditsOf("c3"), "the last reader keeps the rows of all three")
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, historyWS, "c3") })
	require.Empty(t, f.auditsOf("c3"))
}

func testAuditLegacySnapshot(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 2)
	_, err := f.audit("src", "a1", "model gpt-b")
	require.NoError(t, err)
	f.addTurns("src", 3, 3)
	probe, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: "src",
		ThroughTurnID: "src-t3", RequestID: "req-probe", TargetSessionID: "probe"})
	require.NoError(t, err)
	// The same fork as a forkgraph from before migration 28 froze it: the audit messages copied
	// into the snapshot, no bound. The probe that froze the rest is failed, freeing the boundary.
	op, err := s.GetOperation(f.ctx, historyWS, probe.ID)
	require.NoError(t, err)
	failed := op
	failed.Status = forkengine.StatusFailed
	op.ID, op.RequestID, op.TargetSessionID = "op-legacy", "req-legacy", "child"
	op.Snapshot.AuditBound = 0
	op.Snapshot.AuditMessages = f.auditsOf("src")
	op.Snapshot.AuditMessages[0].Position = 0
	op.SnapshotHash, err = forkengine.SnapshotHash(op.Snapshot)
	require.NoError(t, err)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		if changed, err := tx.UpdateOperation(ctx, failed, forkengine.StatusPrepared); err != nil || !changed {
			return errors.Join(err, errors.New("the probe did not fail"))
		}
		return tx.InsertOperation(ctx, op)
	})
	op, err = f.engine.ProcessOperation(f.ctx, historyWS, op.ID)
	require.NoError(t, err)
	require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
	h, _, err := s.HistoryOf(f.ctx, historyWS, "child")
	require.NoError(t, err)
	require.Equal(t, []forkengine.AuditMessage{forkengine.PresentAuditMessage(h, nil, f.auditsOf("src")[0])}, f.auditsOf("child"),
		"the same rows as the copy, read through the history: none stored twice")
}

func testAuditMessageOrder(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	_, err := f.audit("src", "first", "before any turn")
	require.NoError(t, err)
	f.addTurns("src", 1, 1)
	_, err = f.audit("src", "second", "after turn 1")
	require.NoError(t, err)
	_, err = f.audit("src", "third", "after turn 1, later")
	require.NoError(t, err)
	f.addTurns("src", 2, 3)
	f.fork("src", "src-t3", "child")
	src, child := f.auditsOf("src"), f.auditsOf("child")
	require.Equal(t, auditContents(src), auditContents(child))
	for i := range src {
		require.Equal(t, src[i].AfterSequence, child[i].AfterSequence, "drawn after the same turn")
		require.Equal(t, src[i].CreatedAt, child[i].CreatedAt)
	}
	tr := f.read("child")
	require.Equal(t, []string{"src-t1 prompt", "src-t1 answer", "src-t2 prompt", "src-t2 answer", "src-t3 prompt", "src-t3 answer"},
		tr.contents(), "the messages of the turns around them are the source's")
}

func testAuditEmptyID(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 2)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		_, err := tx.AppendAuditMessages(ctx, []forkengine.AuditMessage{{WorkspaceID: historyWS, SessionID: "src",
			AfterSequence: 1, Kind: "model_changed", Content: "written below the engine", CreatedAt: f.clock()}})
		return err
	})
	_, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: "src",
		ThroughTurnID: "src-t2", RequestID: "req-child", TargetSessionID: "child"})
	requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonInteractionUnmappable)
	n, err := s.CountOperations(f.ctx, historyWS, forkengine.OperationFilter{})
	require.NoError(t, err)
	require.Zero(t, n, "nothing prepared")
	_, err = f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: "src",
		ThroughTurnID: "src-t1", RequestID: "req-before", TargetSessionID: "before"})
	require.NoError(t, err, "a fork whose prefix holds no such row goes ahead")
}
