package forkenginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Issue 24: a fork's prepare reads its source's prefix (forkengine.Prefix) without walking its
// turns when the store is a PrefixReader. What it reads must be exactly what the walk reads, for
// every boundary, or the snapshot (and its hash) and the fail-closed checks would differ.

func prefixTests() map[string]storeTest {
	return map[string]storeTest{
		"GivenIrregularTurnsInteractionsAndTypedMessages_WhenThePrefixIsRead_ThenItIsTheWalksAtEveryBoundary": testPrefixReadIsTheWalk,
		"GivenAChainOfForks_WhenTheirPrefixesAreRead_ThenAtEveryBoundaryItIsTheWalks":                         testPrefixOfAFork,
		"GivenADeepChainOverAnIrregularRoot_WhenForkedThroughInheritedTurns_ThenTheReadIsTheWalkAndCommits":   testPrefixThroughInheritedTurns,
		"GivenMessagesAppendedBetweenPrepareAndCommit_WhenTheForksCommit_ThenTheyCountWhatWasFrozen":          testFrozenMessageCount,
		"GivenAPrefixOfNoMessages_WhenForked_ThenTheSnapshotSaysItCountedNoneAndTheChildHoldsNone":            testCountedEmptyPrefix,
	}
}

// prefixSource stores root "src" with 12 turns straight through the store: bound and settled but
// for the irregular ones (each a way a turn can lack a binding, or not be settled), the rare bound
// turn a whitespace-spelled binding makes a candidate the store must drop, interactions and typed
// messages on several turns, a plain message on each. It returns the ids the prefix through
// sequence 12 must hold: irregular turns, interactions, typed messages.
func prefixSource(t *testing.T, f *refusalFixture) (irregular, interactions, typed []string) {
	t.Helper()
	f.root("src", 3)
	bindings := map[int]func(*forkengine.Turn){
		4:  func(tr *forkengine.Turn) { tr.ProviderTurnBinding = nil },
		5:  func(tr *forkengine.Turn) { tr.ProviderTurnBinding = json.RawMessage(`{}`) },
		6:  func(tr *forkengine.Turn) { tr.ProviderTurnBinding = json.RawMessage(`{ }`) },
		7:  func(tr *forkengine.Turn) { tr.ProviderTurnID = tr.ID },
		8:  func(tr *forkengine.Turn) { tr.ProviderTurnID = "" },
		9:  func(tr *forkengine.Turn) { tr.ProviderTurnBinding = json.RawMessage(` {"turn": "src-t9"} `) }, // bound
		10: func(tr *forkengine.Turn) { tr.ProviderTurnBinding = json.RawMessage(`[1,2]`) },
		11: func(tr *forkengine.Turn) { tr.Phase, tr.SettledAt = forkengine.PhaseRunning, nil }, // bound, not settled
	}
	update(t, f.store, func(ctx context.Context, tx forkengine.Tx) error {
		for seq := int64(4); seq <= 12; seq++ {
			tr := newTurn(historyWS, "src", fmt.Sprintf("src-t%d", seq), seq)
			if change := bindings[int(seq)]; change != nil {
				change(&tr)
			}
			if err := tx.UpsertTurn(ctx, tr); err != nil {
				return err
			}
		}
		// Interactions of turns 2, 5 (two, the later one first by id), 12 and none else.
		for i, in := range []struct{ turn, id string }{{"src-t5", "i-b"}, {"src-t2", "i-a"}, {"src-t5", "i-a5"}, {"src-t12", "i-z"}} {
			err := tx.UpsertInteraction(ctx, forkengine.Interaction{WorkspaceID: historyWS, SessionID: "src", TurnID: in.turn,
				ID: in.id, RequestID: "r-" + in.id, Kind: forkengine.InteractionPermission, Prompt: json.RawMessage(`{"tool":"shell"}`),
				State: forkengine.InteractionPending, CreatedAt: at(100 + i%2), UpdatedAt: at(100 + i%2)})
			if err != nil {
				return err
			}
		}
		return nil
	})
	call := func(id string) forkengine.MessagePart {
		return forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: id, Name: "shell"}
	}
	result := func(id string) forkengine.MessagePart {
		return forkengine.MessagePart{Kind: forkengine.PartToolResult, CallID: id, Output: "ok"}
	}
	f.storeRaw("src", "src-t12", raw("m-12", call("c12")))
	f.storeRaw("src", "src-t2", raw("m-2a", call("c2")), raw("m-2b", result("c2")))
	f.storeRaw("src", "src-t7", raw("m-7", forkengine.MessagePart{Kind: forkengine.PartAttachment, AttachmentID: "a7"}))
	for seq := 4; seq <= 12; seq++ {
		f.append("src", fmt.Sprintf("src-t%d", seq), "plain")
	}
	return []string{"src-t4", "src-t5", "src-t6", "src-t7", "src-t8", "src-t10", "src-t11"},
		[]string{"i-a", "i-a5", "i-b", "i-z"}, []string{"m-2a", "m-2b", "m-7", "m-12"}
}

func testPrefixReadIsTheWalk(t *testing.T, s forkengine.Store) {
	f := newRefusalFixture(t, s)
	irregular, interactions, typed := prefixSource(t, f)
	walk, err := forkengine.WalkPrefix(f.ctx, s, historyWS, "src", 12)
	require.NoError(t, err)
	require.Equal(t, 12, walk.Turns)
	require.Equal(t, "src-t12", walk.Last)
	require.Equal(t, irregular, ids(walk.Irregular, turnID))
	var got []string
	for _, i := range walk.Interactions {
		got = append(got, i.Interaction.ID)
	}
	require.Equal(t, interactions, got, "by turn sequence, then (CreatedAt, ID)")
	require.Equal(t, typed, ids(walk.TypedMessages, messageID))

	pr, ok := s.(forkengine.PrefixReader)
	if !ok {
		return // a store without the reader is walked: what is checked above
	}
	for through := int64(0); through <= 13; through++ {
		want, err := forkengine.WalkPrefix(f.ctx, s, historyWS, "src", through)
		require.NoError(t, err)
		got, ok, err := pr.ReadPrefix(f.ctx, historyWS, "src", through)
		require.NoError(t, err)
		require.True(t, ok, "a root's prefix is read")
		requireInheritedMessages(t, f.ctx, s, "src", through, &got)
		require.Equal(t, want, got, "through %d", through)
	}
	// In a transaction too, which is where prepare reads it.
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		requireReadIsTheWalk(t, ctx, tx, "src", 9)
		return nil
	})
}

// requireInheritedMessages holds a read prefix's count of what a child through `through` would
// inherit to the messages the session presents in the prefix's turns (the walk counts none, so
// it is cleared for the comparison with the walk after).
func requireInheritedMessages(t *testing.T, ctx context.Context, r forkengine.Reader, session string, through int64, got *forkengine.Prefix) {
	t.Helper()
	turns, err := r.TurnsThrough(ctx, historyWS, session, through)
	require.NoError(t, err)
	ids := make([]string, len(turns))
	for i, tr := range turns {
		ids[i] = tr.ID
	}
	msgs, err := r.MessagesByTurnIDs(ctx, historyWS, ids)
	require.NoError(t, err)
	want := 0
	for _, m := range msgs {
		want += len(m)
	}
	require.Equal(t, int64(want), got.InheritedMessages, "%s through %d: the messages a child would inherit", session, through)
	require.True(t, got.Counted, "%s through %d: a read prefix is counted, 0 messages too", session, through)
	got.InheritedMessages, got.Counted = 0, false
}

// Given a chain root → child → grand whose prefixes hold an override (a turn unbound when the
// child was frozen), typed messages and interactions in inherited turns and in the forks' own,
// when each fork's prefix is read at every boundary, then through an inherited turn and through
// a fork's own turn alike it reads what the walk reads.
func testPrefixOfAFork(t *testing.T, s forkengine.Store) {
	f := newRefusalFixture(t, s)
	f.root("src", 3)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		tr := newTurn(historyWS, "src", "src-t2", 2)
		tr.ProviderTurnID = "" // unbound: the child holds a row of its own for it
		if err := tx.UpsertTurn(ctx, tr); err != nil {
			return err
		}
		return tx.UpsertInteraction(ctx, forkengine.Interaction{WorkspaceID: historyWS, SessionID: "src", TurnID: "src-t1",
			ID: "i-src", RequestID: "r-src", Kind: forkengine.InteractionPermission, Prompt: json.RawMessage(`{}`),
			State: forkengine.InteractionPending, CreatedAt: at(50), UpdatedAt: at(50)})
	})
	f.storeRaw("src", "src-t1", raw("m-call", forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: "c1", Name: "shell"}))
	f.storeRaw("src", "src-t2", raw("m-result", forkengine.MessagePart{Kind: forkengine.PartToolResult, CallID: "c1", Output: "ok"}))
	f.fork("src", "src-t3", "child")
	f.addTurns("child", 4, 5)
	f.storeRaw("child", "child-t4", raw("m-call-4", forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: "c4", Name: "shell"}))
	_, err := f.interaction("child", "child-t5", "r5", forkengine.InteractionPending, "")
	require.NoError(t, err)
	f.fork("child", "child-t5", "grand")
	f.addTurns("grand", 6, 7)
	f.storeRaw("grand", "grand-t7", raw("m-call-7", forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: "c7", Name: "shell"}))

	walk, err := forkengine.WalkPrefix(f.ctx, s, historyWS, "grand", 7)
	require.NoError(t, err)
	require.Equal(t, 7, walk.Turns)
	require.Equal(t, "grand-t7", walk.Last)
	require.Len(t, walk.Irregular, 1, "the override of src-t2, unbound")
	require.Len(t, walk.Interactions, 2, "the copies of src-t1's and child-t5's")
	require.Len(t, walk.TypedMessages, 4, "two of src's, one of child's, one of grand's own")
	if _, ok := s.(forkengine.PrefixReader); !ok {
		return // a store without the reader is walked: what is checked above
	}
	for _, fork := range []struct {
		id       string
		boundary int64
		turns    int64
	}{{"child", 3, 5}, {"grand", 5, 7}} {
		for through := int64(0); through <= fork.turns+1; through++ {
			requireReadIsTheWalk(t, f.ctx, s, fork.id, through)
		}
	}
	// A fork of the fork through its own turn commits from the read.
	f.fork("grand", "grand-t7", "great")
	require.Len(t, f.read("great").Turns, 7)
}

// Given a root and a fork of it (with an override), when a fork of each is prepared, messages are
// appended to the source's prefix turns (the boundary turn, an earlier one, an inherited one the
// fork then adopts) and the forks commit, then each child counts the messages frozen, which a
// PrefixReader's snapshot carries (PrefixMessages, so the commit sums no prefix turn), and every
// read of the children agrees with the count (historyFixture.read).
func testFrozenMessageCount(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 3)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		tr := newTurn(historyWS, "src", "src-t2", 2)
		tr.ProviderTurnID = "" // unbound: a child holds a row of its own for it
		return tx.UpsertTurn(ctx, tr)
	})
	f.fork("src", "src-t3", "child")
	f.addTurns("child", 4, 5)
	_, counted := s.(forkengine.PrefixReader)
	child, ok, err := s.HistoryOf(f.ctx, historyWS, "child")
	require.NoError(t, err)
	require.True(t, ok)
	for _, c := range []struct {
		source, through, target string
		appendTo                []string
		frozen                  int64
	}{
		{"src", "src-t3", "root-fork", []string{"src-t3", "src-t1"}, 6},
		{"child", "child-t5", "grand", []string{"child-t5", "child-t4", forkengine.PresentedTurnID(child.Key, 1)}, 10},
	} {
		op, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: c.source,
			ThroughTurnID: c.through, RequestID: "req-" + c.target, TargetSessionID: c.target})
		require.NoError(t, err)
		if counted {
			require.Equal(t, c.frozen, op.Snapshot.PrefixMessages, "%s: the snapshot carries the count", c.target)
		}
		for _, turn := range c.appendTo {
			f.append(c.source, turn, "after the prepare of "+c.target)
		}
		op, err = f.engine.ProcessOperation(f.ctx, historyWS, op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		require.Equal(t, int(c.frozen), len(f.read(c.target).contents()), "%s: what was frozen, nothing appended after", c.target)
		counts, err := s.CountSessionMessages(f.ctx, historyWS, []string{c.target})
		require.NoError(t, err)
		require.Equal(t, int(c.frozen), counts[c.target])
	}
	// A fork of the fork commits from its count too, and reads agree.
	f.fork("grand", f.read("grand").Latest.ID, "great")
	require.Equal(t, 10, len(f.read("great").contents()))
}

// requireReadIsTheWalk holds the store's read of session's prefix through `through` to the walk
// of it, its count of what a child would inherit to the messages the session presents.
func requireReadIsTheWalk(t *testing.T, ctx context.Context, r forkengine.Reader, session string, through int64) {
	t.Helper()
	got, ok, err := r.(forkengine.PrefixReader).ReadPrefix(ctx, historyWS, session, through)
	require.NoError(t, err)
	require.True(t, ok, "%s through %d is read, not left to the walk", session, through)
	want, err := forkengine.WalkPrefix(ctx, r, historyWS, session, through)
	require.NoError(t, err)
	requireInheritedMessages(t, ctx, r, session, through, &got)
	require.Equal(t, want, got, "%s through %d", session, through)
}

// Given a root with irregular turns, interactions and typed messages (prefixSource) and a chain
// of five forks of it, each through its parent's latest turn and adding turns, typed messages
// and an interaction of its own, the first adopting an inherited turn (messages appended to it)
// and the root appended to after the first froze (above its watermark), when every fork's
// prefix is read at every boundary, then it is the walk's; and when each fork is forked through
// an inherited turn of its parent, of the root and of its grandparent, then the snapshot carries
// the messages the source presents there and the child reads and counts exactly those.
func testPrefixThroughInheritedTurns(t *testing.T, s forkengine.Store) {
	f := newRefusalFixture(t, s)
	prefixSource(t, f)
	f.storeRaw("src", "src-t9", raw("m-9", forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: "c9", Name: "shell"}))
	chain := []string{"src"}
	last := "src-t12"
	next := int64(13)
	for d := 1; d <= 5; d++ {
		id := fmt.Sprintf("k%d", d)
		f.fork(chain[d-1], last, id)
		if d == 1 {
			f.append("src", "src-t2", "after k1 froze") // above k1's watermark: not k1's
			h, ok, err := s.HistoryOf(f.ctx, historyWS, id)
			require.NoError(t, err)
			require.True(t, ok)
			f.append(id, forkengine.PresentedTurnID(h.Key, 3), "adopted by k1")
		}
		f.addTurns(id, int(next), int(next+1))
		tool := fmt.Sprintf("c%d", next)
		f.storeRaw(id, fmt.Sprintf("%s-t%d", id, next), raw("m-call-"+id, forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: tool, Name: "shell"}))
		f.storeRaw(id, fmt.Sprintf("%s-t%d", id, next+1), raw("m-result-"+id, forkengine.MessagePart{Kind: forkengine.PartToolResult, CallID: tool, Output: "ok"}))
		_, err := f.interaction(id, fmt.Sprintf("%s-t%d", id, next), "r-"+id, forkengine.InteractionPending, "")
		require.NoError(t, err)
		chain = append(chain, id)
		last = fmt.Sprintf("%s-t%d", id, next+1)
		next += 2
	}
	_, reads := s.(forkengine.PrefixReader)
	if reads {
		for _, id := range chain[1:] {
			turns := int64(len(f.read(id).Turns))
			for through := int64(0); through <= turns+1; through++ {
				requireReadIsTheWalk(t, f.ctx, s, id, through)
			}
		}
		// In a transaction too, which is where prepare reads it.
		update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
			requireReadIsTheWalk(t, ctx, tx, "k5", 14)
			return nil
		})
	}
	for d, id := range chain[1:] {
		source := f.read(id)
		// Through a turn of its parent's own, of the root's (an override, an adopted turn, a plain
		// one) and, from the third on, of its grandparent's.
		sequences := []int64{12 + 2*int64(d), 3, 9, 2}
		if d >= 2 {
			sequences = append(sequences, 12+2*int64(d-1))
		}
		for _, seq := range sequences {
			turn := source.Turns[seq-1]
			want := 0
			for _, tr := range source.Turns[:seq] {
				want += len(source.Messages[tr.ID])
			}
			target := fmt.Sprintf("%s-at-%d", id, seq)
			op := f.fork(id, turn.ID, target)
			if reads {
				require.Equal(t, int64(want), op.Snapshot.PrefixMessages, "%s: the snapshot counts what %s presents through %d", target, id, seq)
			}
			child := f.read(target)
			require.Len(t, child.Turns, int(seq), target)
			got := 0
			for _, tr := range child.Turns {
				got += len(child.Messages[tr.ID])
			}
			require.Equal(t, want, got, "%s: the messages %s presents through %d", target, id, seq)
			counts, err := s.CountSessionMessages(f.ctx, historyWS, []string{target})
			require.NoError(t, err)
			require.Equal(t, want, counts[target], target)
		}
	}
}

// Given a root whose turns hold no message and a fork of it through its own turn (so the fork's
// prefix through an inherited turn holds none either), when each is forked, messages are appended
// to the source's prefix turns between prepare and commit, and the forks commit, then a
// PrefixReader's snapshot says it counted none (PrefixCounted with PrefixMessages 0: 0 used to
// mean "not counted" too, and the commit counted such a prefix again), the stored operation keeps
// that, and each child reads and counts no message; a fork of a prefix with messages still carries
// their count.
func testCountedEmptyPrefix(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	_, err := f.engine.ReportSession(f.ctx, forkengine.SessionReport{WorkspaceID: historyWS, ID: "quiet", Provider: "scripted",
		ProviderSessionID: ptrTo("p-quiet"), Title: ptrTo("quiet")})
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		turn := fmt.Sprintf("quiet-t%d", i)
		_, err := f.engine.ReportTurn(f.ctx, forkengine.TurnReport{WorkspaceID: historyWS, SessionID: "quiet", ID: turn,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptrTo("p-" + turn),
			ProviderTurnBinding: []byte(`{"turn":"` + turn + `"}`)})
		require.NoError(t, err)
	}
	f.fork("quiet", "quiet-t3", "quiet-child")
	f.addTurns("quiet-child", 4, 4) // two messages of its own, above its boundary
	child, ok, err := s.HistoryOf(f.ctx, historyWS, "quiet-child")
	require.NoError(t, err)
	require.True(t, ok)
	_, counted := s.(forkengine.PrefixReader)
	for _, c := range []struct {
		source, through, target string
		frozen                  int64
	}{
		{"quiet", "quiet-t3", "quiet-fork", 0},
		{"quiet-child", forkengine.PresentedTurnID(child.Key, 2), "quiet-inherited", 0},
		// its own turn's two and the one appended to its inherited turn 2 above (adopted)
		{"quiet-child", "quiet-child-t4", "quiet-own", 3},
	} {
		op, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: c.source,
			ThroughTurnID: c.through, RequestID: "req-" + c.target, TargetSessionID: c.target})
		require.NoError(t, err)
		stored, err := s.GetOperation(f.ctx, historyWS, op.ID)
		require.NoError(t, err)
		if counted {
			n, ok := stored.Snapshot.PrefixCount()
			require.True(t, ok, "%s: the stored snapshot says the freeze counted", c.target)
			require.Equal(t, c.frozen, n, c.target)
			require.True(t, stored.Snapshot.PrefixCounted, c.target)
		}
		f.append(c.source, c.through, "after the prepare of "+c.target)
		op, err = f.engine.ProcessOperation(f.ctx, historyWS, op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		require.Equal(t, int(c.frozen), len(f.read(c.target).contents()), "%s: what was frozen, nothing appended after", c.target)
		counts, err := s.CountSessionMessages(f.ctx, historyWS, []string{c.target})
		require.NoError(t, err)
		require.Equal(t, int(c.frozen), counts[c.target], c.target)
	}
}
