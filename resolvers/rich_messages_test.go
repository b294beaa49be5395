package resolvers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// Issue 25 item 4: typed message parts and a turn's details, reported through the API, read
// back, inherited by a fork with its typed references remapped, found by node(id:) and carried
// by the workspace's events.

const partsSelection = `parts { __typename
	... on TextPart { text }
	... on ReasoningPart { text }
	... on ToolCallPart { callId name input }
	... on ToolResultPart { callId output isError }
	... on AttachmentPart { attachmentId fileName mediaType } }`

type partView struct {
	Typename     string `json:"__typename"`
	Text         string
	CallID       string
	Name         *string
	FileName     *string
	Input        json.RawMessage
	Output       string
	IsError      bool
	AttachmentID string
	MediaType    *string
}

type richMessage struct {
	ID, LocalID, Content string
	Parts                []partView
}

type richTurn struct {
	LocalID     string
	Origin      *string
	Error       *struct{ Code, Message string }
	FileChanges []struct {
		Path, Kind   string
		PreviousPath *string
	}
	CompletedCommand *struct {
		Command  string
		ExitCode *int
	}
	Messages []richMessage
}

const richTurnSelection = `localId origin error { code message } fileChanges { path kind previousPath }
	completedCommand { command exitCode } messages { id localId content ` + partsSelection + ` }`

// reportRichTurn reports turn t1 of session s1 (seeded by seedSession with no turns) with its
// details and a transcript of every part kind.
func (a *testAPI) reportRichTurn() {
	a.t.Helper()
	a.mustDo(`mutation($in: ReportTurnInput!) { reportTurn(input: $in) { id } }`, nil, map[string]any{"in": map[string]any{
		"workspaceId": "ws", "sessionId": "s1", "id": "t1", "phase": "SETTLED", "outcome": "FAILED",
		"origin": "USER_PROMPT", "providerTurnId": "p-t1", "providerTurnBinding": map[string]any{"handle": "p-t1"},
		"error":            map[string]any{"code": "tool_failed", "message": "go test failed"},
		"fileChanges":      []any{map[string]any{"path": "a.go", "kind": "MODIFY"}, map[string]any{"path": "b.go", "kind": "RENAME", "previousPath": "old.go"}},
		"completedCommand": map[string]any{"command": "go test ./...", "exitCode": 1},
	}})
	a.mustDo(`mutation($in: AppendMessagesInput!) { appendMessages(input: $in) { id } }`, nil, map[string]any{"in": map[string]any{
		"workspaceId": "ws", "sessionId": "s1", "turnId": "t1", "messages": []any{
			map[string]any{"id": "m-user", "role": "USER", "parts": []any{
				map[string]any{"kind": "TEXT", "text": "run the tests"},
				map[string]any{"kind": "ATTACHMENT", "attachmentId": "att-1", "name": "log.txt", "mediaType": "text/plain"},
			}},
			map[string]any{"id": "m-call", "role": "ASSISTANT", "parts": []any{
				map[string]any{"kind": "REASONING", "text": "call-1 will run them"},
				map[string]any{"kind": "TOOL_CALL", "callId": "call-1", "name": "shell", "input": map[string]any{"cmd": "go test ./...", "ref": "call-1"}},
			}},
			map[string]any{"id": "m-result", "role": "TOOL", "parts": []any{
				map[string]any{"kind": "TOOL_RESULT", "callId": "call-1", "output": "FAIL att-1", "isError": true},
			}},
			map[string]any{"id": "m-plain", "role": "ASSISTANT", "content": "the tests fail"},
		}}})
}

func TestTypedPartsAndTurnDetailsRoundTrip(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("ws", "s1", 0, "")
	api.reportRichTurn()

	var got struct {
		Session struct {
			Turns struct{ Edges []struct{ Node richTurn } }
		}
	}
	api.mustDo(`{ session(workspaceId: "ws", id: "s1") { turns { edges { node { `+richTurnSelection+` } } } } }`, &got, nil)
	turn := got.Session.Turns.Edges[0].Node
	require.Equal(t, "USER_PROMPT", *turn.Origin)
	require.Equal(t, "tool_failed", turn.Error.Code)
	require.Equal(t, "go test failed", turn.Error.Message)
	require.Len(t, turn.FileChanges, 2)
	require.Equal(t, "RENAME", turn.FileChanges[1].Kind)
	require.Equal(t, "old.go", *turn.FileChanges[1].PreviousPath)
	require.Nil(t, turn.FileChanges[0].PreviousPath)
	require.Equal(t, "go test ./...", turn.CompletedCommand.Command)
	require.Equal(t, 1, *turn.CompletedCommand.ExitCode)

	msgs := turn.Messages
	require.Len(t, msgs, 4)
	require.Equal(t, "run the tests\n\n[attachment log.txt]", msgs[0].Content)
	require.Equal(t, `[tool call shell {"cmd":"go test ./...","ref":"call-1"}]`, msgs[1].Content, "reasoning is left out of content")
	require.Equal(t, "[tool error FAIL att-1]", msgs[2].Content)
	require.Equal(t, []partView{{Typename: "TextPart", Text: "the tests fail"}}, msgs[3].Parts, "a plain message is one text part")
	require.Equal(t, "AttachmentPart", msgs[0].Parts[1].Typename)
	require.Equal(t, "att-1", msgs[0].Parts[1].AttachmentID)
	require.Equal(t, "ReasoningPart", msgs[1].Parts[0].Typename)
	require.Equal(t, "call-1", msgs[1].Parts[1].CallID)
	require.JSONEq(t, `{"cmd":"go test ./...","ref":"call-1"}`, string(msgs[1].Parts[1].Input))
	require.Equal(t, partView{Typename: "ToolResultPart", CallID: "call-1", Output: "FAIL att-1", IsError: true}, msgs[2].Parts[0])

	// Fork through t1: the child's copy of the transcript has the child's own call and
	// attachment ids, the call and its result still pair up, and free text, tool input and
	// output keep the source's strings.
	op := api.forkAndCommit("ws", "s1", "t1", "r1")
	var fork struct {
		ForkOperation struct {
			Session struct {
				Turns struct{ Edges []struct{ Node richTurn } }
			}
		}
	}
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "ws", id: $id) { session { turns { edges { node { `+
		richTurnSelection+` } } } } } }`, &fork, map[string]any{"id": op})
	child := fork.ForkOperation.Session.Turns.Edges[0].Node
	require.Equal(t, turn.Origin, child.Origin)
	require.Equal(t, turn.Error, child.Error)
	require.Equal(t, turn.FileChanges, child.FileChanges)
	require.Equal(t, turn.CompletedCommand, child.CompletedCommand)
	cm := child.Messages
	require.Len(t, cm, 4)
	childCall, childResult, childAttachment := cm[1].Parts[1].CallID, cm[2].Parts[0].CallID, cm[0].Parts[1].AttachmentID
	require.NotEqual(t, "call-1", childCall)
	require.Equal(t, childCall, childResult, "the result still answers its call")
	require.NotEqual(t, "att-1", childAttachment)
	require.NotEqual(t, childCall, childAttachment)
	require.JSONEq(t, `{"cmd":"go test ./...","ref":"call-1"}`, string(cm[1].Parts[1].Input), "tool input is not rewritten")
	require.Equal(t, "FAIL att-1", cm[2].Parts[0].Output, "tool output is not rewritten")
	require.Equal(t, "call-1 will run them", cm[1].Parts[0].Text, "free text is not rewritten")
	for i := range cm {
		require.Equal(t, msgs[i].Content, cm[i].Content)
	}

	// node(id:) presents the child's message with the same remapped ids.
	var node struct {
		Node *struct {
			Typename string `json:"__typename"`
			Parts    []partView
		}
	}
	api.mustDo(`query($id: ID!) { node(id: $id) { __typename ... on Message { `+partsSelection+` } } }`, &node,
		map[string]any{"id": cm[2].ID})
	require.NotNil(t, node.Node)
	require.Equal(t, cm[2].Parts, node.Node.Parts)

	// A fork of the fork derives ids of its own again, still paired.
	grand := api.forkAndCommit("ws", fork2Source(t, api, op), child.LocalID, "r2")
	var g struct {
		ForkOperation struct {
			Session struct {
				Turns struct{ Edges []struct{ Node richTurn } }
			}
		}
	}
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "ws", id: $id) { session { turns { edges { node { `+
		richTurnSelection+` } } } } } }`, &g, map[string]any{"id": grand})
	gm := g.ForkOperation.Session.Turns.Edges[0].Node.Messages
	require.NotEqual(t, childCall, gm[1].Parts[1].CallID)
	require.NotEqual(t, "call-1", gm[1].Parts[1].CallID)
	require.Equal(t, gm[1].Parts[1].CallID, gm[2].Parts[0].CallID)
}

// fork2Source is the target session of committed operation op.
func fork2Source(t *testing.T, api *testAPI, op string) string {
	t.Helper()
	var got struct {
		ForkOperation struct{ TargetSessionID string }
	}
	api.mustDo(`query($id: ID!) { forkOperation(workspaceId: "ws", id: $id) { targetSessionId } }`, &got, map[string]any{"id": op})
	return got.ForkOperation.TargetSessionID
}

// The workspace's events carry the turn, and through it the typed transcript.
func TestTypedPartsInWorkspaceEvents(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("ws", "s1", 0, "")
	after := models.EventCursor(api.lastCursor("ws"))
	api.reportRichTurn()
	ws := api.dialWS(nil)
	ws.subscribe("1", `subscription($ws: ID!, $after: String) { workspaceEvents(workspaceId: $ws, after: $after) {
		kind turn { `+richTurnSelection+` } } }`, map[string]any{"ws": "ws", "after": after})
	for {
		var f struct {
			WorkspaceEvents struct {
				Kind string
				Turn *richTurn
			}
		}
		ws.nextData("1", &f)
		ev := f.WorkspaceEvents
		if ev.Kind != "TURN_UPSERTED" || ev.Turn == nil || len(ev.Turn.Messages) < 4 {
			continue
		}
		require.Equal(t, "call-1", ev.Turn.Messages[2].Parts[0].CallID)
		require.Equal(t, "ToolCallPart", ev.Turn.Messages[1].Parts[1].Typename)
		require.Equal(t, "tool_failed", ev.Turn.Error.Code)
		return
	}
}

// Refusals of typed messages and turn details: a stable reason each, and the database unchanged.
func TestTypedPartsAndTurnDetailsRefused(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("ws", "s1", 0, "")
	api.reportRichTurn()
	appendOne := func(msg map[string]any) map[string]any {
		return map[string]any{"in": map[string]any{"workspaceId": "ws", "sessionId": "s1", "turnId": "t1", "messages": []any{msg}}}
	}
	big := make([]any, 201)
	for i := range big {
		big[i] = map[string]any{"kind": "TEXT", "text": "x"}
	}
	for name, c := range map[string]struct {
		query  string
		vars   map[string]any
		reason string
	}{
		"content and parts": {appendMutation, appendOne(map[string]any{"role": "USER", "content": "x",
			"parts": []any{map[string]any{"kind": "TEXT", "text": "x"}}}), "content_with_parts"},
		"a field of another kind": {appendMutation, appendOne(map[string]any{"role": "USER",
			"parts": []any{map[string]any{"kind": "TEXT", "text": "x", "callId": "c"}}}), "invalid_message_part"},
		"a tool call without a name": {appendMutation, appendOne(map[string]any{"role": "ASSISTANT",
			"parts": []any{map[string]any{"kind": "TOOL_CALL", "callId": "c"}}}), "invalid_message_part"},
		"a result of no call of the turn": {appendMutation, appendOne(map[string]any{"role": "TOOL",
			"parts": []any{map[string]any{"kind": "TOOL_RESULT", "callId": "call-elsewhere", "output": "x"}}}), "tool_call_unknown"},
		"too many parts":    {appendMutation, appendOne(map[string]any{"role": "USER", "parts": big}), "too_many_parts"},
		"NUL in a part":     {appendMutation, appendOne(map[string]any{"role": "USER", "parts": []any{map[string]any{"kind": "REASONING", "text": "a\x00"}}}), "invalid_text"},
		"empty parts":       {appendMutation, appendOne(map[string]any{"role": "USER", "parts": []any{}}), "invalid_message_part"},
		"a bad call id":     {appendMutation, appendOne(map[string]any{"role": "ASSISTANT", "parts": []any{map[string]any{"kind": "TOOL_CALL", "callId": " c", "name": "x"}}}), "invalid_id"},
		"an unknown origin": {reportMutation, reportT2(map[string]any{"origin": "automation"}), "unknown_turn_origin"},
		"a rename without its path": {reportMutation, reportT2(map[string]any{"fileChanges": []any{map[string]any{"path": "a", "kind": "RENAME"}}}),
			"invalid_turn_detail"},
		"an error without a code": {reportMutation, reportT2(map[string]any{"error": map[string]any{"code": ""}}), "invalid_turn_detail"},
		"a settled turn's new details": {reportMutation, map[string]any{"in": map[string]any{"workspaceId": "ws", "sessionId": "s1",
			"id": "t1", "phase": "SETTLED", "outcome": "FAILED", "completedCommand": map[string]any{"command": "other"}}}, "turn_settled"},
	} {
		t.Run(name, func(t *testing.T) {
			before := api.tableDigest()
			e := api.expectCode("BAD_USER_INPUT", c.query, c.vars)
			require.Equal(t, c.reason, e.Extensions["reason"], "%+v", e)
			require.Equal(t, before, api.tableDigest(), "a refusal changes nothing")
		})
	}
}

const (
	appendMutation = `mutation($in: AppendMessagesInput!) { appendMessages(input: $in) { id } }`
	reportMutation = `mutation($in: ReportTurnInput!) { reportTurn(input: $in) { id } }`
)

func reportT2(extra map[string]any) map[string]any {
	in := map[string]any{"workspaceId": "ws", "sessionId": "s1", "id": "t2", "phase": "RUNNING"}
	for k, v := range extra {
		in[k] = v
	}
	return map[string]any{"in": in}
}

// A turn stored with free text before the origin set was closed reads as LEGACY_UNKNOWN, and
// one without an origin as null.
func TestLegacyOriginReadsAsLegacyUnknown(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{engine: noBackground})
	api.seedSession("ws", "s1", 2, "")
	ctx := context.Background()
	require.NoError(t, api.db.Update(ctx, func(tx forkengine.Tx) error {
		turn, err := tx.GetTurn(ctx, "ws", "s1-t1")
		if err != nil {
			return err
		}
		turn.Origin = "automation" // as a report stored it before the set was closed
		return tx.UpsertTurn(ctx, turn)
	}))
	var got struct {
		Session struct {
			Turns struct {
				Edges []struct{ Node struct{ Origin *string } }
			}
		}
	}
	api.mustDo(`{ session(workspaceId: "ws", id: "s1") { turns { edges { node { origin } } } } }`, &got, nil)
	require.Equal(t, "LEGACY_UNKNOWN", *got.Session.Turns.Edges[0].Node.Origin)
	require.Nil(t, got.Session.Turns.Edges[1].Node.Origin)
}
