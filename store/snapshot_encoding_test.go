package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// storedSnapshot is a snapshot as the store hands it out: times in whole UTC microseconds, every
// turn and message of the snapshot's session.
func storedSnapshot() forkengine.Snapshot {
	at := fromMicros(time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC).UnixMicro())
	deleted := at.Add(time.Hour)
	s := forkengine.Snapshot{Version: 1, Session: forkengine.Session{WorkspaceID: "ws", ID: "s1",
		Kind: forkengine.SessionRoot, Provider: "simulated", ProviderSessionID: "p-s1", Title: "t <&>",
		Settings: json.RawMessage(`{"a": [1, 2]}`), Visible: true, CreatedAt: at, UpdatedAt: at, DeletedAt: &deleted}}
	for i := range 3 {
		t := forkengine.Turn{WorkspaceID: "ws", SessionID: "s1", ID: fmt.Sprintf("turn-%d", i), Sequence: int64(i + 1),
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, StartedAt: at, UpdatedAt: at}
		if i > 0 {
			t.SettledAt, t.ProviderTurnID, t.ProviderTurnBinding = &at, "p-"+t.ID, json.RawMessage(`{"k":"v"}`)
		}
		s.Turns = append(s.Turns, t)
		s.Messages = append(s.Messages, forkengine.Message{WorkspaceID: "ws", SessionID: "s1", TurnID: t.ID,
			ID: t.ID + "-m", Position: int64(10 + i), Role: forkengine.RoleUser, Content: "héllo \u2028 \"x\"", CreatedAt: at})
	}
	return s
}

func roundTrip(t *testing.T, s forkengine.Snapshot) (string, forkengine.Snapshot) {
	t.Helper()
	text, err := encodeSnapshot(forkengine.ForkOperation{ID: "op", Snapshot: s})
	require.NoError(t, err)
	back, err := decodeSnapshot(text)
	require.NoError(t, err)
	return text, back
}

// canonical is what a version 1 encode and decode makes of s (compacted JSON values, nulls
// dropped): the reference a compact round trip must match.
func canonical(t *testing.T, s forkengine.Snapshot) forkengine.Snapshot {
	raw, err := json.Marshal(s)
	require.NoError(t, err)
	out, err := decodeSnapshot(string(raw))
	require.NoError(t, err)
	return out
}

func TestSnapshotEncodingIsCompactAndExact(t *testing.T) {
	t.Parallel()
	s := storedSnapshot()
	text, back := roundTrip(t, s)
	require.True(t, strings.HasPrefix(text, compactSnapshotPrefix))
	require.Equal(t, canonical(t, s), back)
	v1, err := json.Marshal(s)
	require.NoError(t, err)
	require.Less(t, len(text), len(v1)*2/3, "the compact form is at least a third smaller")
}

func TestSnapshotEncodingFallsBackWhenCompactWouldNotBeExact(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(*forkengine.Snapshot){
		"NanosecondTime": func(s *forkengine.Snapshot) { s.Messages[1].CreatedAt = s.Messages[1].CreatedAt.Add(1) },
		"NonUTCTime": func(s *forkengine.Snapshot) {
			s.Turns[0].StartedAt = s.Turns[0].StartedAt.In(time.FixedZone("x", 3600))
		},
		"TurnOfAnotherSession":   func(s *forkengine.Snapshot) { s.Turns[2].SessionID = "other" },
		"MessageOfAnotherSpace":  func(s *forkengine.Snapshot) { s.Messages[0].WorkspaceID = "" },
		"NilMessages":            func(s *forkengine.Snapshot) { s.Messages = nil },
		"SettledAtWithNanosOnly": func(s *forkengine.Snapshot) { v := s.Session.CreatedAt.Add(999); s.Turns[1].SettledAt = &v },
	} {
		t.Run(name, func(t *testing.T) {
			s := storedSnapshot()
			change(&s)
			text, back := roundTrip(t, s)
			require.False(t, strings.HasPrefix(text, compactSnapshotPrefix))
			require.Equal(t, canonical(t, s), back)
		})
	}
}

// A committed operation's snapshot (its session, no transcript) is compact too, and decodes with
// nil turns and messages, as it was given; an empty transcript still decodes as empty.
func TestSessionOnlySnapshotIsCompactAndExact(t *testing.T) {
	t.Parallel()
	full := storedSnapshot()
	s := forkengine.Snapshot{Version: full.Version, Session: full.Session}
	text, back := roundTrip(t, s)
	require.True(t, strings.HasPrefix(text, compactSnapshotPrefix), text)
	require.Equal(t, canonical(t, s), back)
	require.Nil(t, back.Turns)
	require.Nil(t, back.Messages)

	s.Turns, s.Messages = []forkengine.Turn{}, []forkengine.Message{}
	text, back = roundTrip(t, s)
	require.True(t, strings.HasPrefix(text, compactSnapshotPrefix), text)
	require.Equal(t, canonical(t, s), back)
	require.NotNil(t, back.Turns)
	require.NotNil(t, back.Messages)
}
