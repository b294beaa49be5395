package forkenginetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Issue 25 item 4 (reference §6.2, §3.4 step 5): a prefix holding a typed reference the remap
// cannot map fails the fork closed at prepare, before the provider is asked for a child. The
// rows are written straight through the store, as an older or newer server, or another writer,
// would have left them: the API refuses them at append.

func remapClosedTests() map[string]storeTest {
	return map[string]storeTest{
		"GivenAPartOfAnUnknownKind_WhenForked_ThenRefusedTypedReferenceUnknown":              testRefusedUnknownKind,
		"GivenAReferenceInAFieldItsKindLacks_WhenForked_ThenRefusedTypedReferenceUnknown":    testRefusedMisplacedReference,
		"GivenAToolCallWithoutItsID_WhenForked_ThenRefusedTypedReferenceEmpty":               testRefusedEmptyCallID,
		"GivenAnAttachmentWithoutItsID_WhenForked_ThenRefusedTypedReferenceEmpty":            testRefusedEmptyAttachmentID,
		"GivenTwoCallsOfATurnWithOneID_WhenForked_ThenRefusedTypedReferenceDuplicate":        testRefusedDuplicateCall,
		"GivenABoundaryResultOfALaterTurnsCall_WhenForked_ThenRefusedOutsidePrefix":          testRefusedLaterTurnsCall,
		"GivenAResultOfNoCall_WhenForked_ThenRefusedOutsidePrefix":                           testRefusedResultWithoutCall,
		"GivenAnUnmappableReferenceAfterTheBoundary_WhenForkedBeforeIt_ThenTheForkCommits":   testUnmappableAfterBoundaryIsNoBar,
		"GivenAnInheritedResultOfACallOfAnEarlierTurn_WhenForkedAgain_ThenTheChildPairsThem": testResultOfEarlierTurnPairs,
	}
}

// refusalFixture is a historyFixture whose driver the test can ask whether a fork was dispatched.
type refusalFixture struct {
	*historyFixture
	driver *ScriptedDriver
}

func newRefusalFixture(t *testing.T, s forkengine.Store) *refusalFixture {
	f := newHistoryFixture(t, s)
	driver := NewScriptedDriver()
	e, err := forkengine.New(forkengine.Config{Store: s, Drivers: map[string]forkengine.Driver{"scripted": driver},
		NoBackground: true, Clock: f.clock, InstanceID: "remap-closed-test"})
	require.NoError(t, err)
	f.engine = e
	return &refusalFixture{historyFixture: f, driver: driver}
}

// storeRaw inserts msgs into session's turn straight through the store, as an old row arrives.
func (f *refusalFixture) storeRaw(session, turn string, msgs ...forkengine.Message) {
	f.t.Helper()
	for i := range msgs {
		msgs[i].WorkspaceID, msgs[i].SessionID, msgs[i].TurnID = historyWS, session, turn
		msgs[i].Role, msgs[i].CreatedAt = forkengine.RoleAssistant, f.clock()
		if msgs[i].Content == "" {
			msgs[i].Content = forkengine.RenderParts(msgs[i].Parts)
		}
	}
	update(f.t, f.store, func(ctx context.Context, tx forkengine.Tx) error {
		_, err := tx.InsertMessages(ctx, msgs)
		return err
	})
}

func raw(id string, parts ...forkengine.MessagePart) forkengine.Message {
	return forkengine.Message{ID: id, Parts: parts}
}

// refusalState is what a refused fork must leave as it was: every operation, event and session of
// the workspace, and the source's transcript.
type refusalState struct {
	Operations, Events int
	Sessions           []string
	Source             []string
}

func (f *refusalFixture) state(source string) refusalState {
	f.t.Helper()
	ops, err := f.store.CountOperations(f.ctx, historyWS, forkengine.OperationFilter{})
	require.NoError(f.t, err)
	sessions, err := f.store.ListSessions(f.ctx, historyWS, forkengine.SessionFilter{}, forkengine.PageCursor{}, 100)
	require.NoError(f.t, err)
	// The source's turns and its message count: the SQL stores refuse to decode a part of an
	// unknown kind, so its contents cannot be read back.
	turns, err := f.store.TurnsBySessionIDs(f.ctx, historyWS, []string{source}, 0, 0)
	require.NoError(f.t, err)
	counts, err := f.store.CountSessionMessages(f.ctx, historyWS, []string{source})
	require.NoError(f.t, err)
	return refusalState{Operations: ops, Events: f.eventCount(), Sessions: ids(sessions, sessionID),
		Source: append(ids(turns[source], turnID), fmt.Sprint(counts[source]))}
}

// requireRefused forks source through turn and requires the refusal FORK_CONFLICT reason, with
// nothing dispatched and nothing written; a replay of the request is refused the same way.
func (f *refusalFixture) requireRefused(source, turn, reason string) {
	f.t.Helper()
	before := f.state(source)
	for range 2 {
		_, err := f.engine.StartFork(f.ctx, forkengine.ForkInput{WorkspaceID: historyWS, SourceSessionID: source,
			ThroughTurnID: turn, RequestID: "req-refused", TargetSessionID: "refused"})
		require.ErrorIs(f.t, err, &forkengine.Error{Code: forkengine.CodeForkConflict}, "%v", err)
		require.Equal(f.t, reason, forkengine.ErrorReason(err), "%v", err)
	}
	require.Zero(f.t, f.driver.ForkCalls(), "nothing is dispatched")
	require.Equal(f.t, before, f.state(source), "nothing is written")
	_, err := f.store.GetSession(f.ctx, historyWS, "refused")
	require.ErrorIs(f.t, err, forkengine.ErrNotFound, "the target is neither created nor reserved")
}

// boundaryTurn reports root src with turn src-t1 (a plain prompt) and returns the fixture.
func newRefusalSource(t *testing.T, s forkengine.Store) *refusalFixture {
	f := newRefusalFixture(t, s)
	f.root("src", 1)
	return f
}

func testRefusedUnknownKind(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.storeRaw("src", "src-t1", raw("newer", forkengine.MessagePart{Kind: "image_ref", AttachmentID: "img-1"}))
	f.requireRefused("src", "src-t1", forkengine.ReasonTypedReferenceUnknown)
}

func testRefusedMisplacedReference(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.storeRaw("src", "src-t1", raw("misplaced", forkengine.MessagePart{Kind: forkengine.PartText, Text: "see", CallID: "call-1"}))
	f.requireRefused("src", "src-t1", forkengine.ReasonTypedReferenceUnknown)
}

func testRefusedEmptyCallID(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.storeRaw("src", "src-t1", raw("anonymous", forkengine.MessagePart{Kind: forkengine.PartToolCall, Name: "shell"}))
	f.requireRefused("src", "src-t1", forkengine.ReasonTypedReferenceEmpty)
}

func testRefusedEmptyAttachmentID(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.storeRaw("src", "src-t1", raw("nameless", forkengine.MessagePart{Kind: forkengine.PartAttachment, Name: "log.txt"}))
	f.requireRefused("src", "src-t1", forkengine.ReasonTypedReferenceEmpty)
}

func testRefusedDuplicateCall(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	call := forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: "call-1", Name: "shell"}
	f.storeRaw("src", "src-t1", raw("first", call), raw("second", call))
	f.requireRefused("src", "src-t1", forkengine.ReasonTypedReferenceDuplicate)
}

// Given a result in the boundary turn answering a call of the next turn, when the source is
// forked through the boundary, then the fork is refused; through the next turn, where the call
// is in the prefix, it commits and the child pairs them.
func testRefusedLaterTurnsCall(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.addTurns("src", 2, 2)
	f.storeRaw("src", "src-t1", raw("early-result", forkengine.MessagePart{Kind: forkengine.PartToolResult, CallID: "call-2", Output: "ok"}))
	f.storeRaw("src", "src-t2", raw("late-call", forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: "call-2", Name: "shell"}))
	f.requireRefused("src", "src-t1", forkengine.ReasonTypedReferenceOutsidePrefix)

	f.fork("src", "src-t2", "child")
	child := f.read("child")
	result := child.Messages[child.Turns[0].ID][2].Parts[0]
	call := child.Messages[child.Turns[1].ID][2].Parts[0]
	require.Equal(t, call.CallID, result.CallID, "the child pairs a result with its call of another prefix turn")
	require.NotEqual(t, "call-2", call.CallID)
}

func testRefusedResultWithoutCall(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.storeRaw("src", "src-t1", raw("orphan", forkengine.MessagePart{Kind: forkengine.PartToolResult, CallID: "call-9", Output: "ok"}))
	f.requireRefused("src", "src-t1", forkengine.ReasonTypedReferenceOutsidePrefix)
}

// Given an unmappable row in a turn after the boundary, when the source is forked through the
// boundary, then the fork commits: only the prefix is checked.
func testUnmappableAfterBoundaryIsNoBar(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.addTurns("src", 2, 2)
	f.storeRaw("src", "src-t2", raw("orphan", forkengine.MessagePart{Kind: forkengine.PartToolResult, CallID: "call-9", Output: "ok"}))
	f.fork("src", "src-t1", "child")
	require.Len(t, f.read("child").Turns, 1)
}

// Given a fork whose inherited boundary turn holds a result of a call of an earlier inherited
// turn, when the fork is forked again through it, then the check reads the prefix as the source
// shows it, passes, and the grandchild pairs them.
func testResultOfEarlierTurnPairs(t *testing.T, s forkengine.Store) {
	f := newRefusalSource(t, s)
	f.addTurns("src", 2, 2)
	f.storeRaw("src", "src-t1", raw("call", forkengine.MessagePart{Kind: forkengine.PartToolCall, CallID: "call-1", Name: "shell"}))
	f.storeRaw("src", "src-t2", raw("result", forkengine.MessagePart{Kind: forkengine.PartToolResult, CallID: "call-1", Output: "ok"}))
	f.fork("src", "src-t2", "child")
	child := f.read("child")
	f.fork("child", child.Turns[1].ID, "grand")
	grand := f.read("grand")
	call := grand.Messages[grand.Turns[0].ID][2].Parts[0]
	result := grand.Messages[grand.Turns[1].ID][2].Parts[0]
	require.Equal(t, call.CallID, result.CallID)
	require.NotContains(t, []string{"call-1", child.Messages[child.Turns[0].ID][2].Parts[0].CallID}, call.CallID)
}
