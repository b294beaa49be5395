package forkengine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func hashedSnapshot() Snapshot {
	at := time.Date(2026, 11, 29, 12, 0, 0, 123456000, time.UTC)
	return Snapshot{Version: 1,
		Session: Session{WorkspaceID: "ws", ID: "s", Title: "t", Settings: json.RawMessage(`{ "a" : [1, 2] }`), CreatedAt: at},
		Turns: []Turn{{WorkspaceID: "ws", SessionID: "s", ID: "t1", Sequence: 1, StartedAt: at, SettledAt: &at,
			ProviderTurnBinding: json.RawMessage(`{"k": "v"}`)}},
		Messages: []Message{{WorkspaceID: "ws", SessionID: "s", TurnID: "t1", ID: "m1", Content: "bad \xff byte", CreatedAt: at}},
	}
}

func TestSnapshotHashSurvivesAJSONRoundTrip(t *testing.T) {
	t.Parallel()
	s := hashedSnapshot()
	want, err := snapshotHash(s)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(want, snapshotHashVersion))
	raw, err := json.Marshal(s)
	require.NoError(t, err)
	var back Snapshot
	require.NoError(t, json.Unmarshal(raw, &back))
	back.Session.CreatedAt = back.Session.CreatedAt.In(time.FixedZone("elsewhere", 3600)) // same instant
	match, err := snapshotMatches(back, want)
	require.NoError(t, err)
	require.True(t, match, "compacted JSON, replaced invalid bytes and another zone hash the same")
}

func TestSnapshotHashChangesWithTheHistory(t *testing.T) {
	t.Parallel()
	want, err := snapshotHash(hashedSnapshot())
	require.NoError(t, err)
	for name, change := range map[string]func(*Snapshot){
		"Content":      func(s *Snapshot) { s.Messages[0].Content += "!" },
		"Time":         func(s *Snapshot) { s.Messages[0].CreatedAt = s.Messages[0].CreatedAt.Add(time.Microsecond) },
		"SettledAt":    func(s *Snapshot) { s.Turns[0].SettledAt = nil },
		"Binding":      func(s *Snapshot) { s.Turns[0].ProviderTurnBinding = json.RawMessage(`{"k":"w"}`) },
		"FieldsShift":  func(s *Snapshot) { s.Session.Title, s.Session.Cwd = "", "t" },
		"ExtraMessage": func(s *Snapshot) { s.Messages = append(s.Messages, s.Messages[0]) },
	} {
		t.Run(name, func(t *testing.T) {
			s := hashedSnapshot()
			change(&s)
			match, err := snapshotMatches(s, want)
			require.NoError(t, err)
			require.False(t, match)
		})
	}
}

func TestSnapshotHashOfAnEarlierVersionStillVerifies(t *testing.T) {
	t.Parallel()
	s := hashedSnapshot()
	old, err := jsonSnapshotHash(s)
	require.NoError(t, err)
	match, err := snapshotMatches(s, old)
	require.NoError(t, err)
	require.True(t, match)
	s.Messages[0].Content = "changed"
	match, err = snapshotMatches(s, old)
	require.NoError(t, err)
	require.False(t, match)
}

// Stores before 2026-12 wrote snapshots with encoding/json's HTML escaping, so settings and
// bindings holding &, <, >, U+2028 or U+2029 read back escaped; those snapshots must still verify
// (their commits failed for ever), and the escapes' undoing must not touch anything else.
func TestSnapshotHashSurvivesTheHTMLEscapingOfEarlierStores(t *testing.T) {
	t.Parallel()
	s := hashedSnapshot()
	s.Session.Settings = json.RawMessage(`{"endpoint":"https://example.test/v1?a=1&b=2","prompt":"<b>bold</b>","sep":"a` + "\u2028" + `b","kept":"\\u0026 \u00e9"}`)
	s.Turns[0].ProviderTurnBinding = json.RawMessage(`{"handle":"x&y"}`)
	want, err := snapshotHash(s)
	require.NoError(t, err)

	raw, err := json.Marshal(s) // escapes as those stores did
	require.NoError(t, err)
	require.Contains(t, string(raw), `\u0026b=2`)
	var back Snapshot
	require.NoError(t, json.Unmarshal(raw, &back))
	require.NotEqual(t, string(s.Session.Settings), string(back.Session.Settings))
	match, err := snapshotMatches(back, want)
	require.NoError(t, err)
	require.True(t, match, "an HTML-escaped read of the frozen snapshot hashes as it was frozen")

	back.Turns[0].ProviderTurnBinding = json.RawMessage(`{"handle":"x\u0026z"}`)
	match, err = snapshotMatches(back, want)
	require.NoError(t, err)
	require.False(t, match, "undoing the escapes does not excuse a changed value")
}

func TestUnescapeHTMLKeepsOtherEscapes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"a\u0026b\u003cc\u003e"`: `"a&b<c>"`,
		`"\u2028\u2029"`:          "\"\u2028\u2029\"",
		`"\\u0026"`:               `"\\u0026"`, // an escaped backslash, then the text u0026
		`"\u00e9\n\""`:            `"\u00e9\n\""`,
		`"\u0026"`:                `"&"`,
		`"end\\"`:                 `"end\\"`,
	} {
		require.Equal(t, want, string(unescapeHTML([]byte(in))), in)
	}
}

// A value that held both a character and that character's escape reads back, from such a store,
// with both escaped: the escapes undone must be chosen one by one to find the frozen bytes.
func TestHTMLEscapedSnapshotWithTheClientsOwnEscapesVerifies(t *testing.T) {
	t.Parallel()
	s := hashedSnapshot()
	s.Session.Settings = json.RawMessage(`{"url":"https://x.test/?a=1&b=2","blob":"{\"q\":\"\u0026\"}","lt":"<"}`)
	s.Turns[0].ProviderTurnBinding = json.RawMessage(`{"h":"\u003e>"}`)
	want, err := snapshotHash(s)
	require.NoError(t, err)
	raw, err := json.Marshal(s)
	require.NoError(t, err)
	var back Snapshot
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, 5, countHTMLEscapes(back))
	match, err := snapshotMatches(back, want)
	require.NoError(t, err)
	require.True(t, match, "read back %s, frozen %s", back.Session.Settings, s.Session.Settings)

	back.Session.Settings = json.RawMessage(strings.Replace(string(back.Session.Settings), "b=2", "b=3", 1))
	match, err = snapshotMatches(back, want)
	require.NoError(t, err)
	require.False(t, match, "no choice of escapes excuses a changed value")
}
