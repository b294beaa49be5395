package forkenginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// interactionTests: a turn's interactions are reported idempotently, refused without changing
// anything, read by turn and by id, purged with their session, and inherited by a fork's child
// remapped and frozen (reference §6.1, §6.2), at any depth and after the source is gone.
func interactionTests() map[string]storeTest {
	return map[string]storeTest{
		"GivenAReport_WhenRepeated_ThenOneRowAndNoSecondEvent":            testInteractionReportIdempotent,
		"GivenABadReport_WhenRefused_ThenNothingChanged":                  testInteractionRefusals,
		"GivenAPendingInteraction_WhenForked_ThenChildHasItSuperseded":    testForkInheritsInteractions,
		"GivenAFork_WhenSourceAnswersLater_ThenChildUnchanged":            testForkInteractionsFrozen,
		"GivenAThreeDeepChain_WhenSourcesPurged_ThenInteractionsRemapped": testInteractionsAtDepth,
		"GivenInteractionsAfterTheBoundary_WhenForked_ThenChildLacksThem": testInteractionsOutsideBoundary,
	}
}

func (f *historyFixture) interaction(session, turn, request string, state forkengine.InteractionState, answer string) (forkengine.Interaction, error) {
	in := forkengine.InteractionReport{WorkspaceID: historyWS, SessionID: session, TurnID: turn, RequestID: request,
		Kind: forkengine.InteractionPermission, Prompt: json.RawMessage(`{"tool":"shell","command":"rm -rf build"}`), State: state}
	if answer != "" {
		in.Answer = json.RawMessage(answer)
	}
	return f.engine.ReportInteraction(f.ctx, in)
}

func (f *historyFixture) interactionsOf(turnIDs ...string) map[string][]forkengine.Interaction {
	f.t.Helper()
	got, err := f.store.InteractionsByTurnIDs(f.ctx, historyWS, turnIDs)
	require.NoError(f.t, err)
	return got
}

func (f *historyFixture) eventCount() int {
	f.t.Helper()
	events, err := f.store.EventsAfter(f.ctx, historyWS, 0, 0)
	require.NoError(f.t, err)
	return len(events)
}

func testInteractionReportIdempotent(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 1)
	first, err := f.interaction("src", "src-t1", "req-1", forkengine.InteractionPending, "")
	require.NoError(t, err)
	events := f.eventCount()
	again, err := f.interaction("src", "src-t1", "req-1", forkengine.InteractionPending, "")
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, events, f.eventCount(), "an identical report publishes nothing")
	answered, err := f.interaction("src", "src-t1", "req-1", forkengine.InteractionAnswered, `{"allow": true}`)
	require.NoError(t, err)
	require.Equal(t, first.ID, answered.ID)
	require.Equal(t, forkengine.InteractionAnswered, answered.State)
	require.JSONEq(t, `{"allow":true}`, string(answered.Answer))
	require.NotNil(t, answered.AnsweredAt)
	require.Equal(t, events+1, f.eventCount(), "the answer is one TURN_UPSERTED")
	got := f.interactionsOf("src-t1")["src-t1"]
	require.Len(t, got, 1)
	require.Equal(t, answered, got[0])
	byID, err := s.InteractionsByIDs(f.ctx, historyWS, []string{first.ID, "missing"})
	require.NoError(t, err)
	require.Equal(t, map[string]forkengine.Interaction{first.ID: answered}, byID)
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, historyWS, "src") })
	require.Empty(t, f.interactionsOf("src-t1"), "a purge removes a session's interactions")
}

func testInteractionRefusals(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 1)
	f.root("other", 1)
	_, err := f.interaction("src", "src-t1", "req-1", forkengine.InteractionAnswered, `"yes"`)
	require.NoError(t, err)
	before, events := f.interactionsOf("src-t1", "other-t1"), f.eventCount()
	report := func(mut func(*forkengine.InteractionReport)) error {
		in := forkengine.InteractionReport{WorkspaceID: historyWS, SessionID: "src", TurnID: "src-t1", RequestID: "req-2",
			Kind: forkengine.InteractionQuestion, Prompt: json.RawMessage(`{"q":"which?"}`), State: forkengine.InteractionPending}
		mut(&in)
		_, err := f.engine.ReportInteraction(f.ctx, in)
		return err
	}
	for name, c := range map[string]struct {
		mut    func(*forkengine.InteractionReport)
		code   forkengine.Code
		reason string
	}{
		"UnknownTurn":      {func(in *forkengine.InteractionReport) { in.TurnID = "nope" }, forkengine.CodeNotFound, ""},
		"OtherSessionTurn": {func(in *forkengine.InteractionReport) { in.TurnID = "other-t1" }, forkengine.CodeInvalid, ""},
		"UnknownKind":      {func(in *forkengine.InteractionReport) { in.Kind = "vote" }, forkengine.CodeInvalid, forkengine.ReasonInvalidInteraction},
		"Superseded":       {func(in *forkengine.InteractionReport) { in.State = forkengine.InteractionSuperseded }, forkengine.CodeInvalid, forkengine.ReasonInvalidInteraction},
		"PromptNotObject":  {func(in *forkengine.InteractionReport) { in.Prompt = json.RawMessage(`[1]`) }, forkengine.CodeInvalid, forkengine.ReasonInvalidInteraction},
		"AnswerMissing":    {func(in *forkengine.InteractionReport) { in.State = forkengine.InteractionAnswered }, forkengine.CodeInvalid, forkengine.ReasonInvalidInteraction},
		"AnswerOnPending":  {func(in *forkengine.InteractionReport) { in.Answer = json.RawMessage(`1`) }, forkengine.CodeInvalid, forkengine.ReasonInvalidInteraction},
		"EmptyRequestID":   {func(in *forkengine.InteractionReport) { in.RequestID = "" }, forkengine.CodeInvalid, forkengine.ReasonInvalidID},
		"BadUTF8InPrompt":  {func(in *forkengine.InteractionReport) { in.Prompt = json.RawMessage("{\"q\":\"\xff\"}") }, forkengine.CodeInvalid, forkengine.ReasonInvalidText},
		"OtherKindSameRequest": {func(in *forkengine.InteractionReport) {
			in.RequestID, in.Kind, in.Prompt, in.State, in.Answer = "req-1", forkengine.InteractionPermission, json.RawMessage(`{"tool":"shell","command":"rm -rf build"}`), forkengine.InteractionAnswered, json.RawMessage(`"yes"`)
			in.Kind = forkengine.InteractionQuestion
		}, forkengine.CodeInvalid, forkengine.ReasonInteractionConflict},
		"ChangeOfAnswered": {func(in *forkengine.InteractionReport) {
			in.RequestID, in.Kind, in.Prompt, in.State = "req-1", forkengine.InteractionPermission, json.RawMessage(`{"tool":"shell","command":"rm -rf build"}`), forkengine.InteractionCanceled
		}, forkengine.CodeInvalid, forkengine.ReasonInteractionSettled},
	} {
		err := report(c.mut)
		require.Error(t, err, name)
		requireReason(t, err, c.code, c.reason)
	}
	require.Equal(t, before, f.interactionsOf("src-t1", "other-t1"), "a refusal changes nothing")
	require.Equal(t, events, f.eventCount(), "a refusal publishes nothing")
}

func testForkInheritsInteractions(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 2)
	pending, err := f.interaction("src", "src-t1", "req-p", forkengine.InteractionPending, "")
	require.NoError(t, err)
	answered, err := f.interaction("src", "src-t2", "req-a", forkengine.InteractionAnswered, `{"allow":false}`)
	require.NoError(t, err)
	op := f.fork("src", "src-t2", "child")
	child := f.read("child")
	require.Len(t, child.Turns, 2)
	got := f.interactionsOf(child.Turns[0].ID, child.Turns[1].ID)
	require.Len(t, got[child.Turns[0].ID], 1)
	require.Len(t, got[child.Turns[1].ID], 1)
	p, a := got[child.Turns[0].ID][0], got[child.Turns[1].ID][0]
	require.Equal(t, forkengine.InteractionSuperseded, p.State, "a pending one is superseded in the child")
	require.Equal(t, forkengine.InteractionAnswered, a.State)
	require.JSONEq(t, string(answered.Answer), string(a.Answer))
	require.Equal(t, "child", p.SessionID)
	require.Equal(t, pending.RequestID, p.RequestID, "the request id is the runtime's, kept")
	require.NotEqual(t, pending.ID, p.ID)
	require.NotEqual(t, answered.ID, a.ID)
	// Deterministic per operation: a second fork of the same prefix derives other ids.
	op2 := f.fork("src", "src-t2", "child2")
	require.NotEqual(t, op.ID, op2.ID)
	child2 := f.read("child2")
	got2 := f.interactionsOf(child2.Turns[0].ID)
	require.Len(t, got2[child2.Turns[0].ID], 1)
	require.NotEqual(t, p.ID, got2[child2.Turns[0].ID][0].ID)
	byID, err := s.InteractionsByIDs(f.ctx, historyWS, []string{p.ID})
	require.NoError(t, err)
	require.Equal(t, p, byID[p.ID])
	require.Equal(t, forkengine.InteractionPending, f.interactionsOf("src-t1")["src-t1"][0].State, "the source keeps its own")
}

func testForkInteractionsFrozen(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 1)
	_, err := f.interaction("src", "src-t1", "req-p", forkengine.InteractionPending, "")
	require.NoError(t, err)
	f.fork("src", "src-t1", "child")
	child := f.read("child")
	before := f.interactionsOf(child.Turns[0].ID)
	_, err = f.interaction("src", "src-t1", "req-p", forkengine.InteractionAnswered, `"later"`)
	require.NoError(t, err)
	_, err = f.interaction("src", "src-t1", "req-new", forkengine.InteractionPending, "")
	require.NoError(t, err)
	require.Equal(t, before, f.interactionsOf(child.Turns[0].ID), "later changes to the source never change the child")
	require.Len(t, f.interactionsOf("src-t1")["src-t1"], 2)
}

func testInteractionsAtDepth(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("s0", 1)
	_, err := f.interaction("s0", "s0-t1", "req-0", forkengine.InteractionAnswered, `"ok"`)
	require.NoError(t, err)
	prev := "s0"
	for d := 1; d <= 3; d++ {
		name := fmt.Sprintf("s%d", d)
		tr := f.read(prev)
		last := tr.Turns[len(tr.Turns)-1].ID
		f.fork(prev, last, name)
		tr = f.read(name)
		f.addTurns(name, len(tr.Turns)+1, len(tr.Turns)+1)
		tr = f.read(name)
		_, err := f.interaction(name, tr.Turns[len(tr.Turns)-1].ID, fmt.Sprintf("req-%d", d), forkengine.InteractionPending, "")
		require.NoError(t, err)
		prev = name
	}
	for _, gone := range []string{"s0", "s1"} {
		update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, historyWS, gone) })
	}
	tr := f.read("s3")
	require.Len(t, tr.Turns, 4)
	ids := make([]string, len(tr.Turns))
	for i, turn := range tr.Turns {
		ids[i] = turn.ID
	}
	got := f.interactionsOf(ids...)
	wantStates := []forkengine.InteractionState{forkengine.InteractionAnswered, forkengine.InteractionSuperseded,
		forkengine.InteractionSuperseded, forkengine.InteractionPending}
	for i, turn := range tr.Turns {
		require.Len(t, got[turn.ID], 1, "turn %d", i+1)
		i0 := got[turn.ID][0]
		require.Equal(t, fmt.Sprintf("req-%d", i), i0.RequestID)
		require.Equal(t, "s3", i0.SessionID)
		require.Equal(t, wantStates[i], i0.State, "turn %d", i+1)
	}
}

func testInteractionsOutsideBoundary(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 2)
	_, err := f.interaction("src", "src-t2", "req-late", forkengine.InteractionPending, "")
	require.NoError(t, err)
	f.fork("src", "src-t1", "child")
	child := f.read("child")
	require.Len(t, child.Turns, 1)
	require.Empty(t, f.interactionsOf(child.Turns[0].ID), "only the prefix's turns' interactions are inherited")
}
