package forkengine_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// Scenario 43: the target presents the frozen history inclusively under deterministic ids, read
// through its History rather than copied.
func TestCommitMaterializesTheTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(7)
	h.turn(source, "turn-8", forkengine.PhaseRunning) // after the boundary: never copied
	prepared := h.mustFork("request-1", "turn-7")
	op := h.process(prepared)
	require.Equal(t, forkengine.StatusCommitted, op.Status)
	require.NotNil(t, op.AcceptedAt)
	require.NotNil(t, op.CompletedAt)
	require.Nil(t, op.AcknowledgedAt)

	target, err := h.store.GetSession(h.ctx, ws, op.TargetSessionID)
	require.NoError(t, err)
	require.Equal(t, forkengine.SessionRoot, target.Kind)
	require.Equal(t, provider, target.Provider)
	require.Equal(t, "child-"+op.ID, target.ProviderSessionID)
	require.Equal(t, "123 (2)", target.Title)
	require.Equal(t, "conversations", target.RailSectionKey)
	require.Equal(t, "/projects/app", target.RailProjectPath, "copied from the source (reference §1.1)")
	require.Equal(t, "/project", target.Cwd)
	require.Equal(t, "model-1", target.Model)
	require.JSONEq(t, `{"model":"model-1"}`, string(target.Settings))
	require.Equal(t, *op.CompletedAt, target.CreatedAt)
	require.Equal(t, target.CreatedAt, target.UpdatedAt)

	turns, err := h.store.TurnsThrough(h.ctx, ws, op.TargetSessionID, 100)
	require.NoError(t, err)
	require.Len(t, turns, 7)
	sourceTurns, err := h.store.TurnsThrough(h.ctx, ws, source, 7)
	require.NoError(t, err)
	for i, turn := range turns {
		require.Equal(t, int64(i+1), turn.Sequence)
		require.Regexp(t, `^h[0-9A-Za-z_-]{11}-t[0-9a-z]+$`, turn.ID)
		require.Equal(t, turns[0].ID[:12], turn.ID[:12], "one key per fork")
		require.Equal(t, op.TargetSessionID, turn.SessionID)
		require.Equal(t, sourceTurns[i].ProviderTurnID, turn.ProviderTurnID, "host_copy keeps source bindings")
	}
	require.Equal(t, turns[6].ID, op.TargetTurnID)

	byTurn, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{turns[0].ID, turns[6].ID})
	require.NoError(t, err)
	require.Len(t, byTurn[turns[6].ID], 2)
	require.Equal(t, "prompt of turn-7", byTurn[turns[6].ID][0].Content)
	require.Regexp(t, `^h[0-9A-Za-z_-]{11}-m[0-9a-z]+\.[0-9a-z]+$`, byTurn[turns[6].ID][0].ID)
	require.True(t, strings.HasPrefix(byTurn[turns[6].ID][0].ID, turns[0].ID[:12]), "one key per fork")

	lineages, err := h.store.LineagesByTargetIDs(h.ctx, ws, []string{op.TargetSessionID})
	require.NoError(t, err)
	require.Equal(t, forkengine.Lineage{WorkspaceID: ws, OperationID: op.ID, SourceSessionID: source,
		SourceTurnID: "turn-7", TargetSessionID: op.TargetSessionID, TargetTurnID: op.TargetTurnID,
		ForkedAt: *op.CompletedAt}, lineages[op.TargetSessionID])
}

// Scenario 56: copied messages keep the source's transcript order.
func TestCommitKeepsMessageOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	// A late message of turn-1 comes after turn-2's in the transcript and stays there.
	_, err := h.engine.AppendMessages(h.ctx, forkengine.MessageAppend{WorkspaceID: ws, SessionID: source, TurnID: "turn-1",
		Messages: []forkengine.MessageInput{{ID: "late", Role: forkengine.RoleTool, Content: "late tool output"}}})
	require.NoError(t, err)
	prepared := h.mustFork("request-1", "turn-2")
	op := h.process(prepared)
	var sourceOrder, targetOrder []string
	sourceMessages, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{"turn-1", "turn-2"})
	require.NoError(t, err)
	frozen := append(sourceMessages["turn-1"], sourceMessages["turn-2"]...)
	sortByPosition(frozen)
	for _, m := range frozen {
		sourceOrder = append(sourceOrder, m.Content)
	}
	turns, err := h.store.TurnsThrough(h.ctx, ws, op.TargetSessionID, 100)
	require.NoError(t, err)
	byTurn, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{turns[0].ID, turns[1].ID})
	require.NoError(t, err)
	all := append(byTurn[turns[0].ID], byTurn[turns[1].ID]...)
	sortByPosition(all)
	for _, m := range all {
		targetOrder = append(targetOrder, m.Content)
	}
	require.Equal(t, []string{"prompt of turn-1", "answer of turn-1", "prompt of turn-2", "answer of turn-2", "late tool output"}, sourceOrder)
	require.Equal(t, sourceOrder, targetOrder)
}

// Scenario 55: the commit copies the frozen snapshot, not what the source became since.
func TestCommitUsesTheFrozenSnapshot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	op := h.mustFork("request-1", "turn-2")
	h.session(source, "provider-session-1", "renamed source")
	_, err := h.engine.AppendMessages(h.ctx, forkengine.MessageAppend{WorkspaceID: ws, SessionID: source, TurnID: "turn-2",
		Messages: []forkengine.MessageInput{{ID: "after-prepare", Role: forkengine.RoleUser, Content: "too late"}}})
	require.NoError(t, err)
	op = h.process(op)
	require.Equal(t, forkengine.StatusCommitted, op.Status)
	target, err := h.store.GetSession(h.ctx, ws, op.TargetSessionID)
	require.NoError(t, err)
	require.Equal(t, "123 (2)", target.Title)
	msgs, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{op.TargetTurnID})
	require.NoError(t, err)
	require.Len(t, msgs[op.TargetTurnID], 2)
}

// A turn of the prefix that never settled is settled as interrupted in the target.
func TestCommitSettlesUnsettledPrefixTurns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.session(source, "provider-session-1", "123")
	h.turn(source, "turn-1", forkengine.PhaseRunning)
	h.turn(source, "turn-2", forkengine.PhaseSettled)
	op := h.forkAndProcess("request-1", "turn-2")
	turns, err := h.store.TurnsThrough(h.ctx, ws, op.TargetSessionID, 100)
	require.NoError(t, err)
	require.Equal(t, forkengine.PhaseSettled, turns[0].Phase)
	require.Equal(t, forkengine.OutcomeInterrupted, turns[0].Outcome)
	require.NotNil(t, turns[0].SettledAt)
}

// Scenario 50: provider_owned mode rewrites each bound child turn's binding, so the child is
// forkable again and a fork of the fork commits.
func TestCommitProviderOwnedForkOfFork(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.driver.SetDescriptor(forkengine.Descriptor{Kind: "owned", Version: "v1",
		StateBindingMode: forkengine.BindingProviderOwned, ThroughTurn: true}, nil)
	h.seed(2)
	h.turn(source, "turn-3", forkengine.PhaseRunning) // settled below without a provider turn:
	reportTurn(t, h, "turn-3", ptr(""), "")           // a turn no binding is returned for
	h.turn(source, "turn-4", forkengine.PhaseSettled)
	first := h.forkAndProcess("request-1", "turn-4")
	require.Equal(t, forkengine.StatusCommitted, first.Status, first.Error)
	require.Len(t, first.TargetTurnBindings, 3)
	require.Equal(t, "receipt-"+first.ID, first.Receipt)

	child, err := h.store.TurnsThrough(h.ctx, ws, first.TargetSessionID, 100)
	require.NoError(t, err)
	require.Equal(t, "child-"+first.ID+"-1", child[0].ProviderTurnID, "the provider's binding for the first bound turn")
	require.Equal(t, "", child[2].ProviderTurnID, "an unbound source turn stays unbound")
	require.Equal(t, "child-"+first.ID+"-3", child[3].ProviderTurnID)
	require.True(t, child[3].HasProviderBinding())

	target, err := h.store.GetSession(h.ctx, ws, first.TargetSessionID)
	require.NoError(t, err)
	require.Equal(t, []bool{true}, h.engine.TurnForkability(h.ctx, []forkengine.ForkabilityQuery{{Session: target, Turn: child[3]}}))

	second, err := h.engine.StartFork(h.ctx, forkengine.ForkInput{WorkspaceID: ws, SourceSessionID: target.ID,
		ThroughTurnID: child[3].ID, RequestID: "request-2"})
	require.NoError(t, err)
	second = h.process(second)
	require.Equal(t, forkengine.StatusCommitted, second.Status, second.Error)
	require.Equal(t, "123 (3)", second.TargetTitle)
	grandchild, err := h.store.TurnsThrough(h.ctx, ws, second.TargetSessionID, 100)
	require.NoError(t, err)
	require.Equal(t, "child-"+second.ID+"-3", grandchild[3].ProviderTurnID)
	require.Equal(t, 2, h.driver.ForkCalls())
}

// Scenarios 21-23: when the local commit fails after the provider accepted, the acceptance is
// kept, and a later read, replay or recovery commits it without calling the provider again.
func TestCommitRetriedAfterLocalFailure(t *testing.T) {
	t.Parallel()
	for _, finish := range []string{"OKOperationReadCommits", "OKReplayThenProcessCommits", "OKRecoveryCommits"} {
		t.Run(finish, func(t *testing.T) {
			flaky := &flakyStore{MemStore: forkenginetest.NewMemStore()}
			h := newHarness(t, func(cfg *forkengine.Config) { cfg.Store = flaky })
			h.store = flaky.MemStore
			h.seed(7)
			op := h.mustFork("request-1", "turn-7")
			// One failure for the commit beside the acceptance, one for the commit retried from
			// provider_accepted, one for the commit attempted by the read below.
			flaky.failLineageWrites.Store(3)
			_, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
			require.ErrorIs(t, err, errDiskFull)
			require.Equal(t, forkengine.StatusProviderAccepted, h.stored(op.ID).Status)
			require.Equal(t, "child-"+op.ID, h.stored(op.ID).TargetProviderSessionID)

			read, err := h.engine.Operation(h.ctx, ws, op.ID)
			require.NoError(t, err, "a failed commit on read is not an error")
			require.Equal(t, forkengine.StatusProviderAccepted, read.Status)

			switch finish {
			case "OKOperationReadCommits":
				read, err = h.engine.Operation(h.ctx, ws, op.ID)
			case "OKReplayThenProcessCommits":
				read = h.mustFork("request-1", "turn-7")
				require.Equal(t, forkengine.StatusProviderAccepted, read.Status, "a replay does no work")
				read, err = h.engine.ProcessOperation(h.ctx, ws, op.ID)
			case "OKRecoveryCommits":
				var report forkengine.RecoveryReport
				report, err = h.engine.Recover(h.ctx)
				require.Equal(t, forkengine.RecoveryReport{Scanned: 1, Committed: 1}, report)
				read = h.stored(op.ID)
			}
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, read.Status)
			require.Equal(t, 1, h.driver.ForkCalls())
		})
	}
}

var errDiskFull = errors.New("disk full")

// flakyStore fails a number of lineage writes, which makes that many commits roll back.
type flakyStore struct {
	*forkenginetest.MemStore
	failLineageWrites atomic.Int32
}

func (s *flakyStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	return s.MemStore.Update(ctx, func(tx forkengine.Tx) error { return fn(flakyTx{tx, s}) })
}

type flakyTx struct {
	forkengine.Tx
	store *flakyStore
}

func (tx flakyTx) InsertLineage(ctx context.Context, l forkengine.Lineage) error {
	if tx.store.failLineageWrites.Add(-1) >= 0 {
		return errDiskFull
	}
	return tx.Tx.InsertLineage(ctx, l)
}

// Committing twice changes nothing the second time.
func TestCommitIsIdempotent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(3)
	op := h.forkAndProcess("request-1", "turn-3")
	events, err := h.store.EventsAfter(h.ctx, ws, 0, 1000)
	require.NoError(t, err)
	again, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
	require.NoError(t, err)
	require.Equal(t, op, again)
	read, err := h.engine.Operation(h.ctx, ws, op.ID)
	require.NoError(t, err)
	require.Equal(t, op, read)
	after, err := h.store.EventsAfter(h.ctx, ws, 0, 1000)
	require.NoError(t, err)
	require.Equal(t, events, after)
}

// A snapshot that no longer matches its hash (changed in storage after it was frozen) is never
// copied; the acceptance stays recorded.
func TestCommitRefusesATamperedSnapshot(t *testing.T) {
	t.Parallel()
	var tampered tamperingStore
	h := newHarness(t, func(cfg *forkengine.Config) {
		tampered.Store = cfg.Store
		cfg.Store = &tampered
	})
	h.seed(2)
	op := h.mustFork("request-1", "turn-2")
	op.TargetProviderSessionID = "child-tampered"
	putOperation(t, h, op, forkengine.StatusProviderAccepted)
	tampered.active.Store(true)
	_, err := h.engine.ProcessOperation(h.ctx, ws, op.ID)
	require.ErrorContains(t, err, "frozen snapshot does not match its hash")
	require.Equal(t, forkengine.StatusProviderAccepted, h.stored(op.ID).Status)
	_, err = h.store.GetSession(h.ctx, ws, op.TargetSessionID)
	require.ErrorIs(t, err, forkengine.ErrNotFound)
}

// tamperingStore, once active, rewrites the first message of every operation snapshot it reads,
// as a corrupted or hand-edited database would return it.
type tamperingStore struct {
	forkengine.Store
	active atomic.Bool
}

func (s *tamperingStore) GetOperation(ctx context.Context, workspaceID, id string) (forkengine.ForkOperation, error) {
	op, err := s.Store.GetOperation(ctx, workspaceID, id)
	return s.tamper(op), err
}

func (s *tamperingStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	return s.Store.Update(ctx, func(tx forkengine.Tx) error { return fn(tamperingTx{tx, s}) })
}

func (s *tamperingStore) tamper(op forkengine.ForkOperation) forkengine.ForkOperation {
	if s.active.Load() && len(op.Snapshot.Segments) > 0 {
		op.Snapshot.Segments[0].Watermark++ // another history than was frozen
	}
	return op
}

type tamperingTx struct {
	forkengine.Tx
	store *tamperingStore
}

func (tx tamperingTx) GetOperation(ctx context.Context, workspaceID, id string) (forkengine.ForkOperation, error) {
	op, err := tx.Tx.GetOperation(ctx, workspaceID, id)
	return tx.store.tamper(op), err
}

// A committed operation keeps its frozen snapshot, a reference of a few hundred bytes whatever
// the transcript (the source session, the boundary, the segments): no transcript is stored in
// it. The projection still answers after the target is deleted.
func TestCommitKeepsTheReferenceSnapshot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(3)
	prepared := h.mustFork("request-1", "turn-3")
	require.Nil(t, prepared.Snapshot.Turns)
	require.Nil(t, prepared.Snapshot.Messages)
	require.Equal(t, 3, prepared.Snapshot.PrefixTurns)
	op := h.process(prepared)
	require.Equal(t, forkengine.StatusCommitted, op.Status)
	for _, got := range []forkengine.ForkOperation{op, h.stored(op.ID)} {
		require.Equal(t, prepared.Snapshot, got.Snapshot)
		require.Equal(t, prepared.SnapshotHash, got.SnapshotHash)
	}

	target, err := h.store.GetSession(h.ctx, ws, op.TargetSessionID)
	require.NoError(t, err)
	require.NoError(t, h.engine.DeleteSession(h.ctx, ws, op.TargetSessionID, false))
	session, lineage, err := h.engine.CommittedResult(h.ctx, h.stored(op.ID))
	require.NoError(t, err)
	require.Equal(t, target.Title, session.Title)
	require.Equal(t, target.Settings, session.Settings)
	require.Equal(t, op.TargetTurnID, lineage.TargetTurnID)
}

// An operation prepared before shared history holds the whole prefix in its version 1 snapshot;
// after an upgrade it still commits, as the copy it was prepared as: the child gets rows of its
// own, under the copied ids of then.
func TestVersion1SnapshotCommitsAsACopy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed(2)
	turns, err := h.store.TurnsThrough(h.ctx, ws, source, 2)
	require.NoError(t, err)
	byTurn, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{"turn-1", "turn-2"})
	require.NoError(t, err)
	messages := append(byTurn["turn-1"], byTurn["turn-2"]...)
	src, err := h.store.GetSession(h.ctx, ws, source)
	require.NoError(t, err)
	snap := forkengine.Snapshot{Version: 1, Session: src, Turns: turns, Messages: messages}
	hash, err := forkengine.SnapshotHash(snap)
	require.NoError(t, err)
	lease := h.mustFork("request-new", "turn-1") // a fork of today, for this engine's lease
	op := forkengine.ForkOperation{WorkspaceID: ws, ID: "old-op", RequestID: "old-request", RequestHash: "h",
		SourceSessionID: source, TargetSessionID: "old-child", ThroughTurnID: "turn-2",
		SourceProviderSessionID: "provider-session-1", SourceProviderTurnID: "provider-turn-2",
		SourceProviderTurnBinding: turns[1].ProviderTurnBinding, Provider: provider, DriverKind: "scripted",
		DriverVersion: "v1", Status: forkengine.StatusPrepared, TargetTitle: "123 (2)", Snapshot: snap,
		SnapshotHash: hash, CreatedAt: lease.CreatedAt, UpdatedAt: lease.CreatedAt, LeaseOwner: lease.LeaseOwner,
		LeaseExpiresAt: lease.LeaseExpiresAt}
	require.NoError(t, h.store.Update(h.ctx, func(tx forkengine.Tx) error { return tx.InsertOperation(h.ctx, op) }))
	op = h.process(op)
	require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
	child, err := h.store.TurnsThrough(h.ctx, ws, "old-child", 10)
	require.NoError(t, err)
	require.Len(t, child, 2)
	require.Regexp(t, `^f[0-9A-Za-z_-]{11}t[0-9A-Za-z_-]{11}$`, child[1].ID, "the copied ids of version 1")
	_, found, err := h.store.HistoryOf(h.ctx, ws, "old-child")
	require.NoError(t, err)
	require.False(t, found, "a copy, not a shared history")
	msgs, err := h.store.MessagesByTurnIDs(h.ctx, ws, []string{child[1].ID})
	require.NoError(t, err)
	require.Equal(t, []string{"prompt of turn-2", "answer of turn-2"}, []string{msgs[child[1].ID][0].Content, msgs[child[1].ID][1].Content})
}
