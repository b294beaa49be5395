package forkenginetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Issue 25 item 4 (reference §6.2): the remap composes along a chain of shared-history forks. A
// child presents an inherited typed reference under its own id; a tool result it appends names
// that id. Its fork must present the call and the result under one id again, as a copy of a copy
// would, on every read of the transcript.

// callPairs are the call ids of session's turn seq as every read of its messages shows them: the
// calls' and the results' call ids in position order, per read.
func (f *historyFixture) callPairs(session string, seq int) map[string][]string {
	f.t.Helper()
	tr := f.read(session)
	turn := tr.Turns[seq-1]
	callIDs := func(msgs []forkengine.Message) []string {
		var out []string
		for _, m := range msgs {
			for _, p := range m.Parts {
				if p.Kind == forkengine.PartToolCall || p.Kind == forkengine.PartToolResult {
					out = append(out, string(p.Kind)+":"+p.CallID)
				}
			}
		}
		return out
	}
	byTurn := tr.Messages[turn.ID]
	ids := make([]string, len(byTurn))
	for i, m := range byTurn {
		ids[i] = m.ID
	}
	byID, err := f.store.MessagesByIDs(f.ctx, historyWS, ids)
	require.NoError(f.t, err)
	nodes := make([]forkengine.Message, len(ids))
	for i, id := range ids {
		nodes[i] = byID[id]
	}
	pages, err := f.store.TurnMessagesAfter(f.ctx, historyWS, []string{turn.ID}, 0, 100)
	require.NoError(f.t, err)
	transcript, err := f.store.SessionMessagesAfter(f.ctx, historyWS, []string{session}, forkengine.MessageCursor{}, 100)
	require.NoError(f.t, err)
	var ofTurn []forkengine.Message
	for _, m := range transcript[session] {
		if m.TurnID == turn.ID {
			ofTurn = append(ofTurn, m.Message)
		}
	}
	return map[string][]string{"MessagesByTurnIDs": callIDs(byTurn), "node": callIDs(nodes),
		"TurnMessagesAfter": callIDs(pages[turn.ID]), "SessionMessagesAfter": callIDs(ofTurn)}
}

// requirePaired checks that every read shows the same call ids, that the call of the turn is
// named once by its call and once per result, and returns that id.
func (f *historyFixture) requirePaired(session string, seq, results int) string {
	f.t.Helper()
	reads := f.callPairs(session, seq)
	want := reads["MessagesByTurnIDs"]
	require.Len(f.t, want, 1+results, "%s: a call and %d results", session, results)
	call := want[0][len("tool_call:"):]
	for i, got := range want {
		kind := "tool_result:"
		if i == 0 {
			kind = "tool_call:"
		}
		require.Equal(f.t, kind+call, got, "%s: every result names the call as the call part shows it", session)
	}
	for read, got := range reads {
		require.Equal(f.t, want, got, "%s: %s presents the ids as the turn's messages do", session, read)
	}
	return call
}

// answer appends to session's turn a tool result answering call.
func (f *historyFixture) answer(session, turn, id, call string) {
	f.t.Helper()
	_, err := f.engine.AppendMessages(f.ctx, forkengine.MessageAppend{WorkspaceID: historyWS, SessionID: session, TurnID: turn,
		Messages: []forkengine.MessageInput{{ID: id, Role: forkengine.RoleTool, Parts: []forkengine.MessagePart{
			{Kind: forkengine.PartToolResult, CallID: call, Output: "answered in " + session}}}}})
	require.NoError(f.t, err)
}

// callTurn reports turn id of session holding one tool call (no result yet).
func (f *historyFixture) callTurn(session, id, call string) {
	f.t.Helper()
	f.addTurnsNamed(session, id)
	_, err := f.engine.AppendMessages(f.ctx, forkengine.MessageAppend{WorkspaceID: historyWS, SessionID: session, TurnID: id,
		Messages: []forkengine.MessageInput{{ID: id + "-call", Role: forkengine.RoleAssistant, Parts: []forkengine.MessagePart{
			{Kind: forkengine.PartToolCall, CallID: call, Name: "shell"}}}}})
	require.NoError(f.t, err)
}

// addTurnsNamed reports a settled, provider-bound turn id of session.
func (f *historyFixture) addTurnsNamed(session, id string) {
	f.t.Helper()
	_, err := f.engine.ReportTurn(f.ctx, forkengine.TurnReport{WorkspaceID: historyWS, SessionID: session, ID: id,
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptrTo("p-" + id),
		ProviderTurnBinding: []byte(`{"turn":"` + id + `"}`)})
	require.NoError(f.t, err)
}

// Given a root turn with a tool call and a child that inherited it, when the child appends a
// result answering the call (by the id the child shows) and is forked through that turn, then
// the grandchild's result names the grandchild's id of the call, on every read, and the id is
// the grandchild's own.
func testChildResultPairsInGrandchild(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	f.callTurn("src", "src-t1", "call-1")
	f.fork("src", "src-t1", "child")
	child := f.read("child")
	inChild := f.requirePaired("child", 1, 0)
	f.answer("child", child.Turns[0].ID, "child-result", inChild)
	require.Equal(t, inChild, f.requirePaired("child", 1, 1), "the append keeps the child's id of the call")

	f.fork("child", child.Turns[0].ID, "grand")
	inGrand := f.requirePaired("grand", 1, 1)
	require.NotContains(t, []string{"call-1", inChild}, inGrand, "the grandchild has a call id of its own")
	require.Equal(t, inChild, f.requirePaired("child", 1, 1), "the child is unchanged")
}

// Given the chain root → child → grand → great, each appending a result to the inherited call's
// turn, when great is forked from grand, then every generation pairs each of its results with the
// call under one id of its own, and a sibling fork of the child gets other ids than the grandchild.
func testThreeDeepResultsPair(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	f.callTurn("src", "src-t1", "call-1")
	f.addTurns("src", 2, 2)
	seen := map[string]string{"call-1": "src"}
	source, turn := "src", "src-t1"
	for i, session := range []string{"child", "grand", "great"} {
		f.fork(source, turn, session)
		tr := f.read(session)
		require.Len(t, tr.Turns, 1)
		call := f.requirePaired(session, 1, i)
		require.NotContains(t, seen, call, "%s has a call id of its own", session)
		seen[call] = session
		f.answer(session, tr.Turns[0].ID, session+"-result", call)
		require.Equal(t, call, f.requirePaired(session, 1, i+1))
		source, turn = session, tr.Turns[0].ID
	}
	// A sibling of grand, forked from child after grand, reads child's rows under its own ids.
	f.fork("child", f.read("child").Turns[0].ID, "sibling")
	call := f.requirePaired("sibling", 1, 1)
	require.NotContains(t, seen, call, "siblings never share a call id")
}
