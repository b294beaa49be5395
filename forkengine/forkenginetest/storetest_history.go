package forkenginetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Shared history (issue 24): a committed fork reads its prefix through its History, and every
// observable contract of a copy holds. These tests drive a real engine (with a ScriptedDriver)
// over the store under test, as an agent runtime and a client would.

func historyTests() map[string]storeTest {
	return map[string]storeTest{
		"ChildPresentsTheFrozenPrefix":     testChildPresentsThePrefix,
		"ImmutableAfterSourceEdits":        testImmutableAfterSourceEdits,
		"SoftDeleteAndPurgeOfSource":       testDeleteOfSource,
		"PurgeMiddleOfTenDeepChain":        testPurgeMiddleOfChain,
		"FiftyDeepPages":                   testFiftyDeepPages,
		"InheritedIDsResolveAndStayStable": testInheritedIDs,
		"AppendToAnInheritedTurn":          testAppendToInheritedTurn,
		"ConcurrentForksOfOneSource":       testConcurrentForks,
	}
}

// historyFixture is an engine over the store under test.
type historyFixture struct {
	t      *testing.T
	ctx    context.Context
	store  forkengine.Store
	engine *forkengine.Engine
	mu     sync.Mutex
	now    time.Time
}

const historyWS = "ws-h"

func newHistoryFixture(t *testing.T, s forkengine.Store) *historyFixture {
	f := &historyFixture{t: t, ctx: context.Background(), store: s, now: baseTime}
	e, err := forkengine.New(forkengine.Config{Store: s, Drivers: map[string]forkengine.Driver{"scripted": NewScriptedDriver()},
		NoBackground: true, Clock: f.clock, InstanceID: "history-test"})
	require.NoError(t, err)
	f.engine = e
	return f
}

func (f *historyFixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(time.Millisecond)
	return f.now
}

// root reports a root session with turns settled, provider-bound turns "<id>-t<i>" of two
// messages each.
func (f *historyFixture) root(id string, turns int) {
	f.t.Helper()
	_, err := f.engine.ReportSession(f.ctx, forkengine.SessionReport{WorkspaceID: historyWS, ID: id, Provider: "scripted",
		ProviderSessionID: ptrTo("p-" + id), Title: ptrTo(id)})
	require.NoError(f.t, err)
	f.addTurns(id, 1, turns)
}

// addTurns reports turns from..to of session id ("<id>-t<i>"), each with two messages.
func (f *historyFixture) addTurns(id string, from, to int) {
	f.t.Helper()
	for i := from; i <= to; i++ {
		turn := fmt.Sprintf("%s-t%d", id, i)
		_, err := f.engine.ReportTurn(f.ctx, forkengine.TurnReport{WorkspaceID: historyWS, SessionID: id, ID: turn,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptrTo("p-" + turn),
			ProviderTurnBinding: []byte(`{"turn":"` + turn + `"}`)})
		require.NoError(f.t, err)
		f.append(id, turn, turn+" prompt", turn+" answer")
	}
}

func (f *historyFixture) append(session, turn string, contents ...string) []forkengine.Message {
	f.t.Helper()
	in := forkengine.MessageAppend{WorkspaceID: historyWS, SessionID: session, TurnID: turn}
	for _, c := range contents {
		in.Messages = append(in.Messages, forkengine.MessageInput{Role: forkengine.RoleUser, Content: c})
	}
	msgs, err := f.engine.AppendMessages(f.ctx, in)
	require.NoError(f.t, err)
	return msgs
}

// fork forks source through turn, commits it and acknowledges it, and returns the target's id.
func (f *historyFixture) fork(source, turn, target string) forkengine.ForkOperation {
	f.t.Helper()
	op, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: source,
		ThroughTurnID: turn, RequestID: "req-" + target, TargetSessionID: target})
	require.NoError(f.t, err)
	op, err = f.engine.ProcessOperation(f.ctx, historyWS, op.ID)
	require.NoError(f.t, err)
	require.Equal(f.t, forkengine.StatusCommitted, op.Status, op.Error)
	_, err = f.engine.Acknowledge(f.ctx, historyWS, op.ID, "")
	require.NoError(f.t, err)
	return op
}

// transcript is a session's turns and their messages as every read presents them.
type transcript struct {
	Turns    []forkengine.Turn
	Messages map[string][]forkengine.Message
	Count    int
	Latest   forkengine.Turn
}

func (f *historyFixture) read(session string) transcript {
	f.t.Helper()
	all, err := f.store.TurnsBySessionIDs(f.ctx, historyWS, []string{session}, 0, 0)
	require.NoError(f.t, err)
	out := transcript{Turns: all[session]}
	ids := make([]string, len(out.Turns))
	for i, t := range out.Turns {
		ids[i] = t.ID
	}
	out.Messages, err = f.store.MessagesByTurnIDs(f.ctx, historyWS, ids)
	require.NoError(f.t, err)
	counts, err := f.store.CountTurnsBySessionIDs(f.ctx, historyWS, []string{session})
	require.NoError(f.t, err)
	out.Count = counts[session]
	latest, err := f.store.LatestTurnsBySessionIDs(f.ctx, historyWS, []string{session})
	require.NoError(f.t, err)
	out.Latest = latest[session]
	require.Equal(f.t, len(out.Turns), out.Count, "%s: the count agrees with the turns", session)
	f.checkMessageCounts(session, ids, out.Messages)
	return out
}

// checkMessageCounts holds the maintained message counts to the rows the reads present: the
// transcript's count is the messages of its turns, each turn's count its messages.
func (f *historyFixture) checkMessageCounts(session string, turnIDs []string, msgs map[string][]forkengine.Message) {
	f.t.Helper()
	total := 0
	want := map[string]int{}
	for _, id := range turnIDs {
		total += len(msgs[id])
		if len(msgs[id]) > 0 {
			want[id] = len(msgs[id])
		}
	}
	transcripts, err := f.store.CountSessionMessages(f.ctx, historyWS, []string{session})
	require.NoError(f.t, err)
	require.Equal(f.t, total, transcripts[session], "%s: the transcript's count agrees with its messages", session)
	turns, err := f.store.CountTurnMessages(f.ctx, historyWS, turnIDs)
	require.NoError(f.t, err)
	require.Equal(f.t, want, turns, "%s: each turn's count agrees with its messages", session)
}

// contents are the message texts of a transcript in turn order.
func (tr transcript) contents() []string {
	var out []string
	for _, t := range tr.Turns {
		for _, m := range tr.Messages[t.ID] {
			out = append(out, m.Content)
		}
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

func testChildPresentsThePrefix(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 3)
	op := f.fork("src", "src-t2", "child")
	child := f.read("child")
	require.Len(t, child.Turns, 2)
	require.Equal(t, []string{"src-t1 prompt", "src-t1 answer", "src-t2 prompt", "src-t2 answer"}, child.contents())
	require.Equal(t, op.TargetTurnID, child.Turns[1].ID, "the lineage names the boundary as the child presents it")
	require.Equal(t, child.Turns[1], child.Latest)
	for i, turn := range child.Turns {
		require.Equal(t, "child", turn.SessionID)
		require.Equal(t, int64(i+1), turn.Sequence)
		require.True(t, turn.Settled())
		for _, m := range child.Messages[turn.ID] {
			require.Equal(t, "child", m.SessionID)
			require.Equal(t, turn.ID, m.TurnID)
		}
	}
	active, err := s.ActiveTurnsBySessionIDs(f.ctx, historyWS, []string{"child"})
	require.NoError(t, err)
	require.Empty(t, active)

	// The child's own turns follow the inherited ones.
	f.addTurns("child", 3, 3)
	child = f.read("child")
	require.Len(t, child.Turns, 3)
	require.Equal(t, "child-t3", child.Turns[2].ID)
	require.Equal(t, int64(3), child.Turns[2].Sequence)
	page, err := s.TurnsBySessionIDs(f.ctx, historyWS, []string{"child", "src"}, 1, 1)
	require.NoError(t, err)
	require.Equal(t, []forkengine.Turn{child.Turns[1]}, page["child"])
	require.Equal(t, "src-t2", page["src"][0].ID)
	back, err := s.TurnsBySessionIDsBefore(f.ctx, historyWS, []string{"child"}, 3, 2)
	require.NoError(t, err)
	require.Equal(t, []forkengine.Turn{child.Turns[1], child.Turns[0]}, back["child"])
}

func testImmutableAfterSourceEdits(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 2)
	f.fork("src", "src-t2", "child")
	before := f.read("child")

	f.append("src", "src-t1", "late message of a settled prefix turn")
	f.append("src", "src-t2", "late message of the boundary")
	f.addTurns("src", 3, 4)
	_, err := f.engine.ReportSession(f.ctx, forkengine.SessionReport{WorkspaceID: historyWS, ID: "src", Provider: "scripted",
		Title: ptrTo("renamed")})
	require.NoError(t, err)
	_, err = f.engine.ReportTurn(f.ctx, forkengine.TurnReport{WorkspaceID: historyWS, SessionID: "src", ID: "src-t1",
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptrTo("p-other")})
	require.Equal(t, forkengine.ReasonTurnSettled, forkengine.ErrorReason(err), "a settled turn the child shares never changes")

	require.Equal(t, before, f.read("child"))
	require.Len(t, f.read("src").Turns, 4)
}

func testDeleteOfSource(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 3)
	f.fork("src", "src-t3", "child")
	before := f.read("child")
	f.fork("child", before.Turns[2].ID, "grand")
	grand := f.read("grand")
	require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, "src", false))
	require.Equal(t, before, f.read("child"), "soft delete of the source")
	require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, "src", true))
	require.Equal(t, before, f.read("child"), "purge of the source")
	require.Equal(t, grand, f.read("grand"))
	_, err := s.GetSession(f.ctx, historyWS, "src")
	require.ErrorIs(t, err, forkengine.ErrNotFound)

	// A purged id reported again is a new, empty session, not the old history.
	f.root("src", 0)
	require.Empty(t, f.read("src").Turns)
	require.Equal(t, before, f.read("child"))

	// Purging the last readers frees the rows; nothing of them shows anywhere.
	require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, "grand", true))
	require.Equal(t, before, f.read("child"))
	require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, "child", true))
	require.Empty(t, f.read("child").Turns)
	msgs, err := s.MessagesByIDs(f.ctx, historyWS, messageIDs(before))
	require.NoError(t, err)
	require.Empty(t, msgs)
}

func messageIDs(tr transcript) []string {
	var out []string
	for _, t := range tr.Turns {
		for _, m := range tr.Messages[t.ID] {
			out = append(out, m.ID)
		}
	}
	return out
}

// chain forks c0 (a root of two turns) n times, each ci adding one turn of its own before it is
// forked through that turn; it returns the chain's session ids.
func (f *historyFixture) chain(n int) []string {
	f.t.Helper()
	f.root("c0", 2)
	ids := []string{"c0"}
	through := "c0-t2"
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("c%d", i)
		f.fork(ids[i-1], through, id)
		f.addTurns(id, i+2, i+2)
		through = fmt.Sprintf("%s-t%d", id, i+2)
		ids = append(ids, id)
	}
	return ids
}

func testPurgeMiddleOfChain(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	ids := f.chain(10)
	before := map[string]transcript{}
	for _, id := range ids[6:] {
		before[id] = f.read(id)
	}
	require.Len(t, before["c10"].Turns, 12)
	require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, "c5", true))
	for _, id := range ids[6:] {
		require.Equal(t, before[id], f.read(id), "%s after the purge of c5", id)
	}
	// And of the root, and of c6: c10 still reads every turn of the chain.
	require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, "c0", true))
	require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, "c6", true))
	require.Equal(t, before["c10"], f.read("c10"))
	for _, id := range slices.Backward(ids) {
		if id != "c0" && id != "c5" && id != "c6" {
			require.NoError(t, f.engine.DeleteSession(f.ctx, historyWS, id, true), id)
		}
	}
}

func testFiftyDeepPages(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	ids := f.chain(50)
	deep := ids[50]
	whole := f.read(deep)
	require.Len(t, whole.Turns, 52)
	var contents []string
	for i := 1; i <= 52; i++ {
		owner := ids[max(0, i-2)]
		contents = append(contents, fmt.Sprintf("%s-t%d prompt", owner, i), fmt.Sprintf("%s-t%d answer", owner, i))
	}
	require.Equal(t, contents, whole.contents())
	var forward []forkengine.Turn
	for after := int64(0); ; {
		page, err := s.TurnsBySessionIDs(f.ctx, historyWS, []string{deep}, after, 5)
		require.NoError(t, err)
		if len(page[deep]) == 0 {
			break
		}
		forward = append(forward, page[deep]...)
		after = page[deep][len(page[deep])-1].Sequence
	}
	require.Equal(t, whole.Turns, forward)
	var backward []forkengine.Turn
	for before := int64(0); ; {
		page, err := s.TurnsBySessionIDsBefore(f.ctx, historyWS, []string{deep}, before, 7)
		require.NoError(t, err)
		if len(page[deep]) == 0 {
			break
		}
		backward = append(backward, page[deep]...)
		before = page[deep][len(page[deep])-1].Sequence
	}
	slices.Reverse(backward)
	require.Equal(t, whole.Turns, backward)

	// A root holding the same transcript as rows of its own: the deep child's transcript pages,
	// both ways, and its counts are the copy's.
	_, err := f.engine.ReportSession(f.ctx, forkengine.SessionReport{WorkspaceID: historyWS, ID: "copy", Provider: "scripted"})
	require.NoError(t, err)
	for i := 1; i <= 52; i++ {
		turn := fmt.Sprintf("copy-t%d", i)
		_, err := f.engine.ReportTurn(f.ctx, forkengine.TurnReport{WorkspaceID: historyWS, SessionID: "copy", ID: turn,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted})
		require.NoError(t, err)
		f.append("copy", turn, contents[2*i-2], contents[2*i-1])
	}
	copied := f.read("copy")
	require.Equal(t, contents, copied.contents())
	counts, err := s.CountSessionMessages(f.ctx, historyWS, []string{deep, "copy"})
	require.NoError(t, err)
	require.Equal(t, map[string]int{deep: 104, "copy": 104}, counts)
	pages := func(id string, size int, backward bool) (texts []string, n int) {
		c := forkengine.MessageCursor{}
		read := s.SessionMessagesAfter
		if backward {
			c, read = forkengine.TranscriptEnd, s.SessionMessagesBefore
		}
		for {
			page, err := read(f.ctx, historyWS, []string{id}, c, size)
			require.NoError(t, err)
			for _, m := range page[id] {
				texts = append(texts, m.Content)
			}
			if len(page[id]) < size {
				break
			}
			n++
			c = page[id][size-1].Cursor()
		}
		if backward {
			slices.Reverse(texts)
		}
		return texts, n
	}
	for _, backward := range []bool{false, true} {
		got, n := pages(deep, 7, backward)
		want, m := pages("copy", 7, backward)
		require.Equal(t, contents, want, "the copy's transcript, backward %v", backward)
		require.Equal(t, want, got, "the deep child's transcript pages, backward %v", backward)
		require.Equal(t, m, n, "as many full pages")
	}
	// The messages of a page of turns in the middle and at the tail, by page.
	for _, after := range []int64{10, 40} {
		dp, err := s.TurnsBySessionIDs(f.ctx, historyWS, []string{deep, "copy"}, after, 10)
		require.NoError(t, err)
		for i := range dp[deep] {
			a, b := dp[deep][i].ID, dp["copy"][i].ID
			byTurn, err := s.TurnMessagesAfter(f.ctx, historyWS, []string{a, b}, 0, 1)
			require.NoError(t, err)
			rest, err := s.TurnMessagesAfter(f.ctx, historyWS, []string{a}, byTurn[a][0].Position, 5)
			require.NoError(t, err)
			restCopy, err := s.TurnMessagesAfter(f.ctx, historyWS, []string{b}, byTurn[b][0].Position, 5)
			require.NoError(t, err)
			require.Equal(t, contentsOf(byTurn[b]), contentsOf(byTurn[a]), "first message of turn %d", after+int64(i)+1)
			require.Equal(t, contentsOf(restCopy[b]), contentsOf(rest[a]), "the rest of turn %d", after+int64(i)+1)
		}
	}
}

func testInheritedIDs(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 3)
	f.fork("src", "src-t3", "child")
	first, second := f.read("child"), f.read("child")
	require.Equal(t, first, second, "ids equal across reads")
	for _, turn := range first.Turns {
		got, err := s.GetTurn(f.ctx, historyWS, turn.ID)
		require.NoError(t, err)
		require.Equal(t, turn, got)
		byID, err := s.MessagesByIDs(f.ctx, historyWS, messageIDs(first))
		require.NoError(t, err)
		for _, m := range first.Messages[turn.ID] {
			require.Equal(t, m, byID[m.ID])
		}
	}
	byIDs, err := s.TurnsByIDs(f.ctx, historyWS, []string{first.Turns[0].ID, "src-t1", "nope"})
	require.NoError(t, err)
	require.Equal(t, map[string]forkengine.Turn{first.Turns[0].ID: first.Turns[0], "src-t1": f.read("src").Turns[0]}, byIDs)

	// A fork of the fork names an inherited turn by the id the child presents.
	op := f.fork("child", first.Turns[1].ID, "grand")
	grand := f.read("grand")
	require.Len(t, grand.Turns, 2)
	require.Equal(t, op.TargetTurnID, grand.Turns[1].ID)
	require.Equal(t, first.contents()[:4], grand.contents())
	require.NotEqual(t, first.Turns[0].ID, grand.Turns[0].ID, "each fork presents its own ids")
}

func testAppendToInheritedTurn(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 2)
	f.fork("src", "src-t2", "child")
	child := f.read("child")
	inherited := child.Turns[0]
	added := f.append("child", inherited.ID, "the child's own note")
	require.Equal(t, inherited.ID, added[0].TurnID)
	after := f.read("child")
	require.Equal(t, child.Turns, after.Turns, "the turn keeps its id and fields")
	require.Equal(t, []string{"src-t1 prompt", "src-t1 answer", "the child's own note"}, contentsOf(after.Messages[inherited.ID]))
	require.Equal(t, []string{"src-t1 prompt", "src-t1 answer"}, contentsOf(f.read("src").Messages["src-t1"]), "the source is untouched")
	// A fork of the child through that turn sees the note too.
	f.fork("child", inherited.ID, "grand")
	grand := f.read("grand")
	require.Equal(t, []string{"src-t1 prompt", "src-t1 answer", "the child's own note"}, grand.contents())
}

func contentsOf(msgs []forkengine.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

func testConcurrentForks(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 4)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			op, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: "src",
				ThroughTurnID: fmt.Sprintf("src-t%d", 1+i%4), RequestID: fmt.Sprintf("concurrent-%d", i),
				TargetSessionID: fmt.Sprintf("fork-%d", i)})
			if err == nil {
				_, err = f.engine.ProcessOperation(f.ctx, historyWS, op.ID)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	committed := 0
	for i, err := range errs {
		if err != nil {
			require.ErrorIs(t, err, &forkengine.Error{Code: forkengine.CodeForkInProgress}, "fork %d", i)
			continue
		}
		tr := f.read(fmt.Sprintf("fork-%d", i))
		if len(tr.Turns) == 0 {
			continue // the barrier answered with another request's operation
		}
		committed++
		require.Len(t, tr.Turns, 1+i%4)
		require.Len(t, tr.contents(), 2*(1+i%4))
	}
	require.GreaterOrEqual(t, committed, 4, "each boundary committed at least once")
}
