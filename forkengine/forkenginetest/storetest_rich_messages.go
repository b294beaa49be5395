package forkenginetest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Issue 25 item 4 (reference §1.2, §6.1, §6.2): every store keeps a message's typed parts and a
// turn's details exactly, and a fork's child presents them with its own typed references.
func richMessageTests() map[string]storeTest {
	return map[string]storeTest{
		"PartsAndTurnDetailsReadBackOnEveryRead":           testPartsReadBack,
		"Scenario52AttachmentsAreRemappedInTheChild":       testAttachmentsRemapped,
		"ToolCallAndResultStayPairedInTheChild":            testToolCallsRemapped,
		"ChildResultOfAnInheritedCallPairsInTheGrandchild": testChildResultPairsInGrandchild,
		"ThreeDeepResultsOfAnInheritedCallPair":            testThreeDeepResultsPair,
		"CopyPathRemapsAsSharedHistory":                    testCopyPathRemapsAsSharedHistory,
		"ForkOfACopiedChildPairsItsResults":                testForkOfACopiedChildPairs,
	}
}

func exitCode(n int) *int { return &n }

// richTurn reports turn id of session with its details and a transcript of every part kind,
// the attachment named attachment and the tool call call.
func (f *historyFixture) richTurn(session, id, attachment, call string) []forkengine.Message {
	f.t.Helper()
	changes := []forkengine.FileChange{{Path: "a.go", Kind: forkengine.FileModified}, {Path: "b.go", Kind: forkengine.FileRenamed, PreviousPath: "old.go"}}
	_, err := f.engine.ReportTurn(f.ctx, forkengine.TurnReport{WorkspaceID: historyWS, SessionID: session, ID: id,
		Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeFailed, Origin: ptrTo("USER_PROMPT"),
		ProviderTurnID: ptrTo("p-" + id), ProviderTurnBinding: []byte(`{"turn":"` + id + `"}`),
		Error: &forkengine.TurnError{Code: "tool_failed", Message: "exit 1"}, FileChanges: &changes,
		CompletedCommand: &forkengine.CompletedCommand{Command: "go test ./...", ExitCode: exitCode(1)}})
	require.NoError(f.t, err)
	msgs, err := f.engine.AppendMessages(f.ctx, forkengine.MessageAppend{WorkspaceID: historyWS, SessionID: session, TurnID: id,
		Messages: []forkengine.MessageInput{
			{ID: id + "-u", Role: forkengine.RoleUser, Parts: []forkengine.MessagePart{
				{Kind: forkengine.PartText, Text: "look at " + attachment},
				{Kind: forkengine.PartAttachment, AttachmentID: attachment, Name: "log.txt", MediaType: "text/plain"}}},
			{ID: id + "-a", Role: forkengine.RoleAssistant, Parts: []forkengine.MessagePart{
				{Kind: forkengine.PartReasoning, Text: "run " + call},
				{Kind: forkengine.PartToolCall, CallID: call, Name: "shell", Input: json.RawMessage(`{ "cmd" : "` + call + `" }`)}}},
			{ID: id + "-r", Role: forkengine.RoleTool, Parts: []forkengine.MessagePart{
				{Kind: forkengine.PartToolResult, CallID: call, Output: "failed " + call, IsError: true}}},
			{ID: id + "-p", Role: forkengine.RoleAssistant, Content: "plain"},
		}})
	require.NoError(f.t, err)
	return msgs
}

func testPartsReadBack(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	written := f.richTurn("src", "src-t1", "att-1", "call-1")
	require.Equal(t, `{"cmd":"call-1"}`, string(written[1].Parts[1].Input), "tool input is kept compact")
	require.Equal(t, "look at att-1\n\n[attachment log.txt]", written[0].Content)
	require.Nil(t, written[3].Parts, "a plain message has no typed parts")
	require.Equal(t, []forkengine.MessagePart{{Kind: forkengine.PartText, Text: "plain"}}, written[3].ContentParts())

	turn, err := s.GetTurn(f.ctx, historyWS, "src-t1")
	require.NoError(t, err)
	require.Equal(t, forkengine.OriginUserPrompt, turn.OriginKind())
	require.Equal(t, &forkengine.TurnError{Code: "tool_failed", Message: "exit 1"}, turn.Error)
	require.Equal(t, "old.go", turn.FileChanges[1].PreviousPath)
	require.Equal(t, 1, *turn.CompletedCommand.ExitCode)

	byTurn := f.read("src").Messages["src-t1"]
	require.Len(t, byTurn, 4)
	byID, err := s.MessagesByIDs(f.ctx, historyWS, []string{"src-t1-u", "src-t1-a", "src-t1-r", "src-t1-p"})
	require.NoError(t, err)
	for i, w := range written {
		require.Equal(t, w.Parts, byTurn[i].Parts, w.ID)
		require.Equal(t, w.Content, byTurn[i].Content, w.ID)
		require.Equal(t, w.Parts, byID[w.ID].Parts, w.ID)
	}
	// A re-sent typed message is the same message; other parts under its id are a conflict.
	again, err := f.engine.AppendMessages(f.ctx, forkengine.MessageAppend{WorkspaceID: historyWS, SessionID: "src", TurnID: "src-t1",
		Messages: []forkengine.MessageInput{{ID: "src-t1-r", Role: forkengine.RoleTool, Parts: written[2].Parts}}})
	require.NoError(t, err)
	require.Equal(t, written[2].Position, again[0].Position)
	_, err = f.engine.AppendMessages(f.ctx, forkengine.MessageAppend{WorkspaceID: historyWS, SessionID: "src", TurnID: "src-t1",
		Messages: []forkengine.MessageInput{{ID: "src-t1-r", Role: forkengine.RoleTool, Parts: []forkengine.MessagePart{
			{Kind: forkengine.PartToolResult, CallID: "call-1", Output: "other"}}}}})
	require.Equal(t, forkengine.ReasonMessageConflict, forkengine.ErrorReason(err))
}

// Scenario 52: given an attachment before the boundary and one after it, when the source is
// forked through the first turn, then the child's message references an attachment id of its
// own (not the source's, and not another fork's), stable across reads, and the attachment
// after the boundary neither blocks the fork nor appears in the child.
func testAttachmentsRemapped(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	f.richTurn("src", "src-t1", "att-1", "call-1")
	f.richTurn("src", "src-t2", "att-2", "call-2")
	f.fork("src", "src-t1", "child-a")
	f.fork("src", "src-t1", "child-b")
	a, b := f.read("child-a"), f.read("child-b")
	require.Len(t, a.Turns, 1)
	attA := a.Messages[a.Turns[0].ID][0].Parts[1].AttachmentID
	attB := b.Messages[b.Turns[0].ID][0].Parts[1].AttachmentID
	require.NotEqual(t, "att-1", attA)
	require.NotEqual(t, attA, attB, "two forks never share an attachment id")
	require.Equal(t, attA, f.read("child-a").Messages[a.Turns[0].ID][0].Parts[1].AttachmentID, "stable across reads")
	require.Equal(t, "look at att-1", a.Messages[a.Turns[0].ID][0].Parts[0].Text, "free text is not rewritten")
	require.Equal(t, "log.txt", a.Messages[a.Turns[0].ID][0].Parts[1].Name)
	require.Equal(t, forkengine.OriginUserPrompt, a.Turns[0].OriginKind())
	require.Equal(t, "tool_failed", a.Turns[0].Error.Code)
	require.Len(t, a.Turns[0].FileChanges, 2)
	require.Equal(t, "go test ./...", a.Turns[0].CompletedCommand.Command)
}

// Given a tool call and its result before the boundary, when the source is forked and the fork
// forked again, then each child has call ids of its own, the result still names its call, and
// tool input and output keep the source's text.
func testToolCallsRemapped(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 0)
	f.richTurn("src", "src-t1", "att-1", "call-1")
	f.fork("src", "src-t1", "child")
	child := f.read("child")
	f.fork("child", child.Turns[0].ID, "grand")
	seen := map[string]bool{"call-1": true}
	for _, session := range []string{"child", "grand"} {
		tr := f.read(session)
		msgs := tr.Messages[tr.Turns[0].ID]
		call, result := msgs[1].Parts[1], msgs[2].Parts[0]
		require.False(t, seen[call.CallID], "%s has call ids of its own", session)
		seen[call.CallID] = true
		require.Equal(t, call.CallID, result.CallID, "%s: the result still answers its call", session)
		require.Equal(t, `{"cmd":"call-1"}`, string(call.Input), "tool input is not rewritten")
		require.Equal(t, "failed call-1", result.Output, "tool output is not rewritten")
		require.Equal(t, "run call-1", msgs[1].Parts[0].Text)
	}
}
