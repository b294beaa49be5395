package models

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Every API enum value maps to a valid domain value and back, so a value added to one side only
// fails here rather than on the wire.
func TestEnumsMapBothWays(t *testing.T) {
	for _, k := range AllSessionKind {
		require.True(t, k.Domain().Valid(), k)
		require.Equal(t, k, wire[SessionKind](k.Domain()))
	}
	for _, p := range AllTurnPhase {
		require.True(t, p.Domain().Valid(), p)
		require.Equal(t, p, wire[TurnPhase](p.Domain()))
	}
	for _, o := range AllTurnOutcome {
		require.True(t, o.Domain().Valid(), o)
	}
	for _, r := range AllMessageRole {
		require.True(t, r.Domain().Valid(), r)
	}
	for _, s := range []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching,
		forkengine.StatusProviderAccepted, forkengine.StatusCommitted, forkengine.StatusFailed, forkengine.StatusUnknown} {
		status, phase := PublicStatus(s)
		require.True(t, status.IsValid(), s)
		require.True(t, phase.IsValid(), s)
		require.Contains(t, status.DomainStatuses(), s)
	}
	for _, k := range []forkengine.EventKind{forkengine.EventSessionUpserted, forkengine.EventSessionDeleted,
		forkengine.EventTurnUpserted, forkengine.EventForkOperationUpdated} {
		require.True(t, EventKindFrom(k).IsValid(), k)
	}
	for _, b := range []forkengine.BindingState{forkengine.BindingBound, forkengine.BindingRecoveryRequired, forkengine.BindingUnavailable} {
		require.True(t, BindingStateFrom(b).IsValid(), b)
	}
}

func TestCursors(t *testing.T) {
	scope := SessionListScope("w", forkengine.SessionFilter{})
	s := forkengine.Session{ID: "a|b", CreatedAt: time.Date(2026, 11, 29, 17, 0, 0, 123456000, time.UTC)}
	cursor := SessionCursor(scope, s)
	got, err := DecodeSessionCursor(&cursor, scope)
	require.NoError(t, err)
	require.Equal(t, forkengine.PageCursor{Time: s.CreatedAt, ID: "a|b"}, got)

	_, err = DecodeOperationCursor(&cursor, OperationListScope("w", forkengine.OperationFilter{}))
	require.Equal(t, ReasonInvalidCursor, forkengine.ErrorReason(err), "a session cursor is not an operation cursor")
	for _, bad := range []string{"%%%", EventCursor(0), encodeCursor(cursorSession, "nonsense"),
		encodeCursor(cursorSession, string(scope)+"|nonsense")} {
		_, err := DecodeSessionCursor(&bad, scope)
		require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err), bad)
	}

	turnScope := TurnListScope("w", "s1")
	turn := TurnCursor(turnScope, forkengine.Turn{Sequence: 7})
	seq, err := DecodeTurnCursor(&turn, turnScope)
	require.NoError(t, err)
	require.Equal(t, int64(7), seq)
	ev := EventCursor(42)
	n, given, err := DecodeEventCursor(&ev)
	require.NoError(t, err)
	require.True(t, given)
	require.Equal(t, int64(42), n)
	_, given, err = DecodeEventCursor(nil)
	require.NoError(t, err)
	require.False(t, given, "no after: live only")
	origin := EventCursor(0)
	n, given, err = DecodeEventCursor(&origin)
	require.NoError(t, err)
	require.True(t, given, "the start of the log is a cursor: replay everything")
	require.Zero(t, n)
}

// Cursors are stored by clients: building them without allocating per part must not change one
// byte of them, short or long (past the stack buffers).
func TestCursorBytesAndAllocations(t *testing.T) {
	at := time.Date(2026, 11, 29, 17, 0, 0, 123456000, time.FixedZone("x", 3600))
	long := strings.Repeat("long-id/", 40)
	scope := SessionListScope("w", forkengine.SessionFilter{})
	require.Len(t, string(scope), scopeLength)
	for _, id := range []string{"a|b", long} {
		want := base64.RawURLEncoding.EncodeToString([]byte("session|" + string(scope) + "|" + at.UTC().Format(time.RFC3339Nano) + "|" + id))
		require.Equal(t, want, SessionCursor(scope, forkengine.Session{ID: id, CreatedAt: at}))
	}
	turnScope := TurnListScope("w", "s1")
	require.Equal(t, base64.RawURLEncoding.EncodeToString([]byte("turn|"+string(turnScope)+"|7")),
		TurnCursor(turnScope, forkengine.Turn{Sequence: 7}))
	s := forkengine.Session{ID: "s42", CreatedAt: at}
	require.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = SessionCursor(scope, s) }), 1.0)
	require.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = TurnCursor(turnScope, forkengine.Turn{Sequence: 7}) }), 1.0)
}

// A page cursor belongs to one list: its workspace, for turns its session, and its filter. A
// cursor of another list is invalid_cursor; one from before scopes is still read, unchecked.
func TestCursorsOfAnotherListAreRefused(t *testing.T) {
	at := time.Date(2026, 11, 29, 17, 0, 0, 123456000, time.UTC)
	visible := true
	sessions := SessionListScope("w", forkengine.SessionFilter{})
	c := SessionCursor(sessions, forkengine.Session{ID: "s", CreatedAt: at})
	for name, other := range map[string]ListScope{
		"workspace": SessionListScope("x", forkengine.SessionFilter{}),
		"filter":    SessionListScope("w", forkengine.SessionFilter{Visible: &visible}),
		"roots":     SessionListScope("w", forkengine.SessionFilter{RootsOnly: true}),
	} {
		_, err := DecodeSessionCursor(&c, other)
		require.Equal(t, ReasonInvalidCursor, forkengine.ErrorReason(err), name)
	}
	ops := OperationListScope("w", forkengine.OperationFilter{Statuses: []forkengine.OperationStatus{forkengine.StatusFailed, forkengine.StatusCommitted}})
	require.Equal(t, ops, OperationListScope("w", forkengine.OperationFilter{Statuses: []forkengine.OperationStatus{forkengine.StatusCommitted, forkengine.StatusFailed}}),
		"the order of the statuses does not make another list")
	oc := OperationCursor(ops, forkengine.ForkOperation{ID: "o", CreatedAt: at})
	_, err := DecodeOperationCursor(&oc, OperationListScope("w", forkengine.OperationFilter{SourceSessionID: "s"}))
	require.Equal(t, ReasonInvalidCursor, forkengine.ErrorReason(err))

	tc := TurnCursor(TurnListScope("w", "a"), forkengine.Turn{Sequence: 3})
	_, err = DecodeTurnCursor(&tc, TurnListScope("w", "b"))
	require.Equal(t, ReasonInvalidCursor, forkengine.ErrorReason(err), "another session's turns")

	// Cursors handed out before scopes.
	legacy := encodeCursor(cursorSession, at.Format(time.RFC3339Nano)+"|s")
	got, err := DecodeSessionCursor(&legacy, SessionListScope("x", forkengine.SessionFilter{}))
	require.NoError(t, err)
	require.Equal(t, forkengine.PageCursor{Time: at, ID: "s"}, got)
	legacyTurn := encodeCursor(cursorTurn, "3")
	seq, err := DecodeTurnCursor(&legacyTurn, TurnListScope("w", "b"))
	require.NoError(t, err)
	require.Equal(t, int64(3), seq)
}

// wire converts the values of every enum without allocating, and as strings.ToUpper does.
func TestWireIsMemoized(t *testing.T) {
	for _, r := range AllMessageRole {
		require.Equal(t, r, wire[MessageRole](r.Domain()))
	}
	require.Equal(t, TurnPhase("SOMETHING_NEW"), wire[TurnPhase](forkengine.TurnPhase("something_new")))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = wire[TurnPhase](forkengine.TurnPhase("settled")) }))
}

// A cursor is a client's string: one whose id no id rule admits (a NUL fails the read on
// PostgreSQL, SQLSTATE 22021) is invalid_cursor, with its list's scope or without one.
func TestCursorsWithAnIDNoRuleAdmitsAreRefused(t *testing.T) {
	at := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	sessions := SessionListScope("w", forkengine.SessionFilter{})
	ops := OperationListScope("w", forkengine.OperationFilter{})
	for _, id := range []string{"a\x00b", "\xff", " s", "s\n"} {
		for name, c := range map[string]string{
			"scoped": encodeKeyset(cursorSession, sessions, at, id),
			"legacy": encodeCursor(cursorSession, at.Format(time.RFC3339Nano)+"|"+id),
		} {
			_, err := DecodeSessionCursor(&c, sessions)
			require.Equal(t, ReasonInvalidCursor, forkengine.ErrorReason(err), "%s cursor of id %q", name, id)
		}
		c := encodeKeyset(cursorOperation, ops, at, id)
		_, err := DecodeOperationCursor(&c, ops)
		require.Equal(t, ReasonInvalidCursor, forkengine.ErrorReason(err), "operation cursor of id %q", id)
	}
	good := encodeKeyset(cursorSession, sessions, at, "s")
	_, err := DecodeSessionCursor(&good, sessions)
	require.NoError(t, err, "the same cursor with a valid id")
}
