package store

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// frozenCodecSnapshot sets every base session field to a value of its own, so an encoding that
// moved or dropped one would differ.
func frozenCodecSnapshot() forkengine.Snapshot {
	at := time.Date(2026, 12, 2, 8, 0, 0, 654321000, time.UTC)
	deleted := at.Add(time.Minute)
	s := forkengine.Snapshot{Version: 1, Session: forkengine.Session{WorkspaceID: "w1", ID: "s1",
		Kind: forkengine.SessionChild, Provider: "prov", ProviderSessionID: "ps", Title: "ti & <t>",
		RailSectionKey: "rail", Cwd: "/cwd", Model: "mod", Settings: json.RawMessage(`{"a": 1}`), Visible: true,
		CreatedAt: at, UpdatedAt: at.Add(time.Second), DeletedAt: &deleted}}
	s.Turns = []forkengine.Turn{{WorkspaceID: "w1", SessionID: "s1", ID: "t1", Sequence: 1, Phase: forkengine.PhaseSettled,
		Outcome: forkengine.OutcomeCompleted, Origin: "report", StartedAt: at, SettledAt: &at, UpdatedAt: at,
		ProviderTurnID: "pt1", ProviderTurnBinding: json.RawMessage(`{"k":"v"}`)}}
	s.Messages = []forkengine.Message{{WorkspaceID: "w1", SessionID: "s1", TurnID: "t1", ID: "m1", Position: 3,
		Role: forkengine.RoleUser, Content: "hi", CreatedAt: at}}
	return s
}

// The bytes the store wrote for frozenCodecSnapshot before the session part was derived from the
// tags (main at 8362596): compact JSON on PostgreSQL and the binary format 1 on SQLite, with its
// transcript and session only.
const (
	frozenCompact            = `{"c":1,"v":1,"s":{"w":"w1","i":"s1","k":"child","p":"prov","ps":"ps","ti":"ti & <t>","r":"rail","cw":"/cwd","mo":"mod","se":{"a":1},"vi":true,"ca":1796198400654321,"ua":1796198401654321,"da":1796198460654321},"t":[{"i":"t1","q":1,"ph":"settled","o":"completed","or":"report","sa":1796198400654321,"st":1796198400654321,"ua":1796198400654321,"pt":"pt1","b":{"k":"v"}}],"m":[{"t":"t1","i":"m1","p":3,"r":"user","c":"hi","a":1796198400654321}]}`
	frozenCompactSessionOnly = `{"c":1,"v":1,"s":{"w":"w1","i":"s1","k":"child","p":"prov","ps":"ps","ti":"ti & <t>","r":"rail","cw":"/cwd","mo":"mod","se":{"a":1},"vi":true,"ca":1796198400654321,"ua":1796198401654321,"da":1796198460654321},"so":true}`
	frozenBinary             = "010102027731027331056368696c640470726f760270730874692026203c743e047261696c042f637764036d6f64097b2261223a20317d01e2efeff9c0e8b006e2f8e9fac0e8b00601e28b8cb3c1e8b00601010274310207736574746c656409636f6d706c65746564067265706f7274e2efeff9c0e8b00601e2efeff9c0e8b006e2efeff9c0e8b006037074310a7b226b223a2276227d0101026d31060475736572026869e2efeff9c0e8b006"
	frozenBinarySessionOnly  = "010102027731027331056368696c640470726f760270730874692026203c743e047261696c042f637764036d6f64097b2261223a20317d01e2efeff9c0e8b006e2f8e9fac0e8b00601e28b8cb3c1e8b00600"
)

// A snapshot without later session fields is stored in the bytes it always was, and the bytes
// stored before decode to it.
func TestSnapshotEncodingsOfTheFirstFormatsAreUnchanged(t *testing.T) {
	t.Parallel()
	full := frozenCodecSnapshot()
	sessionOnly := forkengine.Snapshot{Version: 1, Session: full.Session}
	for _, c := range []struct {
		name    string
		s       forkengine.Snapshot
		d       dialect
		want    string
		binary  bool
		decoded forkengine.Snapshot
	}{
		{"CompactJSON", full, postgresDialect, frozenCompact, false, canonical(t, full)},
		{"CompactJSONSessionOnly", sessionOnly, postgresDialect, frozenCompactSessionOnly, false, canonical(t, sessionOnly)},
		{"Binary", full, sqliteDialect, frozenBinary, true, full},
		{"BinarySessionOnly", sessionOnly, sqliteDialect, frozenBinarySessionOnly, true, sessionOnly},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := c.want
			if c.binary {
				raw, err := hex.DecodeString(c.want)
				require.NoError(t, err)
				want = string(raw)
			}
			enc, err := encodeSnapshotFor(c.d, forkengine.ForkOperation{ID: "op", Snapshot: c.s})
			require.NoError(t, err)
			require.Equal(t, want, enc.text)
			back, err := decodeSnapshot(want)
			require.NoError(t, err)
			require.Equal(t, c.decoded, back)
		})
	}
}

// A later session field (metadata) is held by both compact encodings: the binary one in format 2,
// with its bytes as they were, the compact JSON under its key; a snapshot of an earlier store
// that kept such a session as encoding/json still decodes.
func TestLaterSessionFieldsAreKeptByTheCompactEncodings(t *testing.T) {
	t.Parallel()
	const metadata = `{"team": "a&b", "goal": "<x>"}`
	full := frozenCodecSnapshot()
	full.Session.Metadata = json.RawMessage(metadata)
	sessionOnly := forkengine.Snapshot{Version: 1, Session: full.Session}
	for name, s := range map[string]forkengine.Snapshot{"Full": full, "SessionOnly": sessionOnly} {
		t.Run(name, func(t *testing.T) {
			enc, back := binaryRoundTrip(t, s)
			require.Equal(t, []byte{binarySnapshotMagic, binarySnapshotFormatLater}, []byte(enc.text[:2]))
			require.Equal(t, s, back)
			require.Equal(t, metadata, string(back.Session.Metadata))

			// The JSON encodings compact JSON values; neither escapes them for HTML (canonical does).
			want := canonical(t, s)
			want.Session.Metadata = json.RawMessage(`{"team":"a&b","goal":"<x>"}`)
			text, back := roundTrip(t, s)
			require.True(t, strings.HasPrefix(text, compactSnapshotPrefix), text)
			require.Contains(t, text, `"md":{"team":"a&b","goal":"<x>"}`)
			require.Equal(t, want, back)

			verbatim, err := marshalVerbatim(s) // what a store before wrote for a session with metadata
			require.NoError(t, err)
			require.False(t, strings.HasPrefix(string(verbatim), compactSnapshotPrefix))
			back, err = decodeSnapshot(string(verbatim))
			require.NoError(t, err)
			require.Equal(t, want, back)
		})
	}
}

// A damaged format 2 session is an error: truncated anywhere, a later field of a place this
// forkgraph does not know (written by a newer one), or one given twice.
func TestBinarySnapshotRefusesDamagedLaterFields(t *testing.T) {
	t.Parallel()
	s := forkengine.Snapshot{Version: 1, Session: frozenCodecSnapshot().Session}
	s.Session.Metadata = json.RawMessage(`{"k":1}`)
	enc, _ := binaryRoundTrip(t, s)
	for n := 1; n < len(enc.text); n++ {
		_, err := decodeSnapshot(enc.text[:n])
		require.Error(t, err, "truncated to %d of %d bytes", n, len(enc.text))
	}
	frozen, err := hex.DecodeString(frozenBinarySessionOnly)
	require.NoError(t, err)
	base := string(frozen[2 : len(frozen)-1]) // version and base fields, without the transcript byte
	field := "\x0f\x08" + `{"k":1}`           // place 15 (metadata), 1 + its length, its bytes
	later := func(count byte, fields ...string) string {
		return string([]byte{binarySnapshotMagic, binarySnapshotFormatLater}) + base + string(count) + strings.Join(fields, "") + "\x00"
	}
	back, err := decodeSnapshot(later(1, field))
	require.NoError(t, err, "the well-formed bytes decode")
	require.Equal(t, `{"k":1}`, string(back.Session.Metadata))
	_, err = decodeSnapshot(later(1, "\x63"+field[1:]))
	require.Error(t, err, "place 99 is not known")
	_, err = decodeSnapshot(later(1, "\x01"+field[1:]))
	require.Error(t, err, "a base place is not a later field")
	_, err = decodeSnapshot(later(2, field, field))
	require.Error(t, err, "a field given twice")
}
