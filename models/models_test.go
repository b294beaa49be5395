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
	s := forkengine.Session{ID: "a|b", CreatedAt: time.Date(2026, 11, 29, 17, 0, 0, 123456000, time.UTC)}
	cursor := SessionCursor(s)
	got, err := DecodeSessionCursor(&cursor)
	require.NoError(t, err)
	require.Equal(t, forkengine.PageCursor{Time: s.CreatedAt, ID: "a|b"}, got)

	_, err = DecodeOperationCursor(&cursor)
	require.Equal(t, ReasonInvalidCursor, forkengine.ErrorReason(err), "a session cursor is not an operation cursor")
	for _, bad := range []string{"%%%", EventCursor(0), encodeCursor(cursorSession, "nonsense")} {
		_, err := DecodeSessionCursor(&bad)
		require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err), bad)
	}

	turn := TurnCursor(forkengine.Turn{Sequence: 7})
	seq, err := DecodeTurnCursor(&turn)
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
	for _, id := range []string{"a|b", long} {
		want := base64.RawURLEncoding.EncodeToString([]byte("session|" + at.UTC().Format(time.RFC3339Nano) + "|" + id))
		require.Equal(t, want, SessionCursor(forkengine.Session{ID: id, CreatedAt: at}))
	}
	require.Equal(t, base64.RawURLEncoding.EncodeToString([]byte("turn|7")), TurnCursor(forkengine.Turn{Sequence: 7}))
	s := forkengine.Session{ID: "s42", CreatedAt: at}
	require.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = SessionCursor(s) }), 1.0)
}

// wire converts the values of every enum without allocating, and as strings.ToUpper does.
func TestWireIsMemoized(t *testing.T) {
	for _, r := range AllMessageRole {
		require.Equal(t, r, wire[MessageRole](r.Domain()))
	}
	require.Equal(t, TurnPhase("SOMETHING_NEW"), wire[TurnPhase](forkengine.TurnPhase("something_new")))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = wire[TurnPhase](forkengine.TurnPhase("settled")) }))
}
