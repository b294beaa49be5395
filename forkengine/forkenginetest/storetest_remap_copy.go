package forkenginetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Issue 25 item 4: a child copied by an earlier version (a version 1 snapshot, committed by
// copying its rows, targetMessages) remaps typed references by the same rules as a child that
// shares its history: every call and attachment id is its own, one per source id, a result names
// its call, and nothing else changes. Forks of it pair them again.

// copyFork commits source through turn (its sequence seq) the way an operation prepared before
// shared history does: a version 1 snapshot holding the whole prefix, inserted as prepared and
// processed by this engine. It returns the copied child's turns.
func (f *historyFixture) copyFork(source, turn string, seq int64, target string) []forkengine.Turn {
	f.t.Helper()
	src, err := f.store.GetSession(f.ctx, historyWS, source)
	require.NoError(f.t, err)
	turns, err := f.store.TurnsThrough(f.ctx, historyWS, source, seq)
	require.NoError(f.t, err)
	ids := make([]string, len(turns))
	for i, t := range turns {
		ids[i] = t.ID
	}
	byTurn, err := f.store.MessagesByTurnIDs(f.ctx, historyWS, ids)
	require.NoError(f.t, err)
	var messages []forkengine.Message
	for _, id := range ids {
		messages = append(messages, byTurn[id]...)
	}
	snap := forkengine.Snapshot{Version: 1, Session: src, Turns: turns, Messages: messages}
	hash, err := forkengine.SnapshotHash(snap)
	require.NoError(f.t, err)
	now := f.clock()
	until := now.Add(time.Hour)
	boundary := turns[len(turns)-1]
	op := forkengine.ForkOperation{WorkspaceID: historyWS, ID: "op-" + target, RequestID: "req-" + target, RequestHash: "old",
		SourceSessionID: source, TargetSessionID: target, ThroughTurnID: turn,
		SourceProviderSessionID: src.ProviderSessionID, SourceProviderTurnID: boundary.ProviderTurnID,
		SourceProviderTurnBinding: boundary.ProviderTurnBinding, Provider: src.Provider,
		DriverKind: ScriptedDescriptor.Kind, DriverVersion: ScriptedDescriptor.Version, Status: forkengine.StatusPrepared,
		TargetTitle: target, Snapshot: snap, SnapshotHash: hash, CreatedAt: now, UpdatedAt: now,
		LeaseOwner: "history-test", LeaseExpiresAt: &until}
	update(f.t, f.store, func(ctx context.Context, tx forkengine.Tx) error { return tx.InsertOperation(ctx, op) })
	op, err = f.engine.ProcessOperation(f.ctx, historyWS, op.ID)
	require.NoError(f.t, err)
	require.Equal(f.t, forkengine.StatusCommitted, op.Status, op.Error)
	_, found, err := f.store.HistoryOf(f.ctx, historyWS, target)
	require.NoError(f.t, err)
	require.False(f.t, found, "a copy, not a shared history")
	return f.read(target).Turns
}

// shape is a transcript's typed parts with each reference replaced by the order in which its id
// first appears (per kind), so two transcripts that remap ids alike have the same shape.
func shape(tr transcript) []forkengine.MessagePart {
	seen := map[string]string{}
	name := func(kind, id string) string {
		if _, ok := seen[kind+id]; !ok {
			seen[kind+id] = kind + "#" + string(rune('a'+len(seen)))
		}
		return seen[kind+id]
	}
	var out []forkengine.MessagePart
	for _, t := range tr.Turns {
		for _, m := range tr.Messages[t.ID] {
			for _, p := range m.ContentParts() {
				if p.CallID != "" {
					p.CallID = name("call", p.CallID)
				}
				if p.AttachmentID != "" {
					p.AttachmentID = name("attachment", p.AttachmentID)
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// references are the call and attachment ids of a transcript.
func references(tr transcript) map[string]bool {
	out := map[string]bool{}
	for _, t := range tr.Turns {
		for _, m := range tr.Messages[t.ID] {
			for _, p := range m.Parts {
				for _, id := range []string{p.CallID, p.AttachmentID} {
					if id != "" {
						out[id] = true
					}
				}
			}
		}
	}
	return out
}

// Given a source with tool calls, results and attachments in two turns, when it is forked once
// through shared history and once through the copy path, then both children have the source's
// parts with ids of their own (none the source's, none the other child's) in the same shape:
// each source id one child id, each result naming its call.
func testCopyPathRemapsAsSharedHistory(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	f.richTurn("src", "src-t1", "att-1", "call-1")
	f.richTurn("src", "src-t2", "att-1", "call-2") // the same attachment again, another call
	f.fork("src", "src-t2", "shared")
	f.copyFork("src", "src-t2", 2, "copied")
	source, shared, copied := f.read("src"), f.read("shared"), f.read("copied")
	require.Equal(t, shape(source), shape(shared), "the shared child keeps the source's shape")
	require.Equal(t, shape(shared), shape(copied), "the copied child remaps as the shared child does")
	srcRefs, sharedRefs, copiedRefs := references(source), references(shared), references(copied)
	require.Len(t, copiedRefs, len(srcRefs))
	for id := range copiedRefs {
		require.False(t, srcRefs[id], "the copy keeps no source id: %s", id)
		require.False(t, sharedRefs[id], "two children never share an id: %s", id)
	}
	again := f.read("copied")
	require.Equal(t, copied.Messages, again.Messages, "the copy's ids are stable across reads")
}

// Given a copied child that appends a result to its copied turn answering the copied call, when
// it is forked through shared history, then the grandchild pairs both results with the call.
func testForkOfACopiedChildPairs(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	f.callTurn("src", "src-t1", "call-1")
	turns := f.copyFork("src", "src-t1", 1, "copied")
	call := f.requirePaired("copied", 1, 0)
	require.NotEqual(t, "call-1", call)
	f.answer("copied", turns[0].ID, "copied-result", call)
	f.fork("copied", turns[0].ID, "grand")
	inGrand := f.requirePaired("grand", 1, 1)
	require.NotContains(t, []string{"call-1", call}, inGrand)
}
