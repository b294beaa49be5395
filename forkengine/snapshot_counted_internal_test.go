package forkengine

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sharedSnapshot is a version 2 snapshot as prepare freezes it, with prefixMessages messages
// counted.
func sharedSnapshot(prefixMessages int64) Snapshot {
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	boundary := Turn{WorkspaceID: "ws", SessionID: "s", ID: "s-t3", Sequence: 3, Phase: PhaseSettled, StartedAt: at, SettledAt: &at,
		UpdatedAt: at, ProviderTurnID: "p3", ProviderTurnBinding: json.RawMessage(`{"turn":"p3"}`)}
	return Snapshot{Version: 2, Session: Session{WorkspaceID: "ws", ID: "s", Title: "t", CreatedAt: at}, Boundary: &boundary,
		Segments:    []HistorySegment{{OwnerWorkspaceID: "ws", OwnerSessionID: "s", From: 0, To: 3, Watermark: 41}},
		PrefixTurns: 3, BoundTurns: 3, AuditBound: 41, PrefixMessages: prefixMessages}
}

// The hashes main (06f32b0) gave these snapshots before a snapshot said it was counted: an
// operation prepared then must verify and commit exactly as it did.
var earlierSharedHashes = map[int64]string{
	0: "2:7f843c24dff278ef9a5f29e783f4377698d3176309108fe1530e48f314ac3bdc",
	7: "2:3a5902c2ca683bc6b5be791700cfa5719fb93b8ac7c2a2deaa20c6640f84610b",
}

func TestSnapshotHashesOfEarlierCountsStillVerify(t *testing.T) {
	for n, want := range earlierSharedHashes {
		got, err := snapshotHash(sharedSnapshot(n))
		require.NoError(t, err)
		require.Equal(t, want, got, "the hash of a snapshot frozen with %d prefix messages", n)
	}
}

// A snapshot that counted none hashes apart from one that did not count (so a stored flag cannot
// be dropped unnoticed), keeps the flag through JSON, and reports its count; one frozen before
// the flag reports a count only when it is not 0.
func TestSnapshotSaysItCountedNoMessages(t *testing.T) {
	unknown, counted := sharedSnapshot(0), sharedSnapshot(0)
	counted.PrefixCounted = true
	a, err := snapshotHash(unknown)
	require.NoError(t, err)
	b, err := snapshotHash(counted)
	require.NoError(t, err)
	require.NotEqual(t, a, b)
	match, err := snapshotMatches(unknown, b)
	require.NoError(t, err)
	require.False(t, match, "the flag is hashed")
	raw, err := json.Marshal(counted)
	require.NoError(t, err)
	var back Snapshot
	require.NoError(t, json.Unmarshal(raw, &back))
	match, err = snapshotMatches(back, b)
	require.NoError(t, err)
	require.True(t, match)
	for _, c := range []struct {
		s     Snapshot
		n     int64
		known bool
	}{{unknown, 0, false}, {counted, 0, true}, {sharedSnapshot(7), 7, true}, {back, 0, true}} {
		n, known := c.s.PrefixCount()
		require.Equal(t, c.n, n)
		require.Equal(t, c.known, known)
	}
	raw, err = json.Marshal(sharedSnapshot(7))
	require.NoError(t, err)
	require.NotContains(t, string(raw), "prefixCounted", "the wire of a snapshot without the flag is as before")
}
