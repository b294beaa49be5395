package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func binaryRoundTrip(t *testing.T, s forkengine.Snapshot) (encodedSnapshot, forkengine.Snapshot) {
	t.Helper()
	enc, err := encodeSnapshotFor(sqliteDialect, forkengine.ForkOperation{ID: "op", Snapshot: s})
	require.NoError(t, err)
	back, err := decodeSnapshot(enc.text)
	require.NoError(t, err)
	return enc, back
}

// The binary form gives back exactly what it was given, bytes included: raw JSON as it was (not
// compacted) and strings that are not valid UTF-8 (the JSON encodings replace those bytes).
func TestBinarySnapshotIsSmallAndExact(t *testing.T) {
	t.Parallel()
	s := storedSnapshot()
	s.Messages[2].Content = "not utf-8: \xff\xfe"
	s.Messages[1].TurnID = "turn-of-an-older-snapshot" // not among the snapshot's turns
	enc, back := binaryRoundTrip(t, s)
	require.Equal(t, byte(binarySnapshotMagic), enc.text[0])
	require.IsType(t, []byte(nil), enc.value, "SQLite stores it as a BLOB")
	require.Equal(t, enc.text, string(enc.value.([]byte)))
	require.Equal(t, s, back)
	require.Equal(t, `{"a": [1, 2]}`, string(back.Session.Settings))

	compact, err := encodeSnapshot(forkengine.ForkOperation{ID: "op", Snapshot: s})
	require.NoError(t, err)
	require.Less(t, len(enc.text), len(compact)*2/3, "at least a third smaller than the compact JSON")
}

// A JSON null stored as raw JSON comes back nil, as from the JSON encodings; an empty value
// (which encoding/json refuses to write) too.
func TestBinarySnapshotNullsAreNil(t *testing.T) {
	t.Parallel()
	s := storedSnapshot()
	s.Session.Settings = json.RawMessage("null")
	s.Turns[1].ProviderTurnBinding = json.RawMessage{}
	_, back := binaryRoundTrip(t, s)
	require.Nil(t, back.Session.Settings)
	require.Nil(t, back.Turns[1].ProviderTurnBinding)
	s.Session.Settings, s.Turns[1].ProviderTurnBinding = nil, nil
	require.Equal(t, s, back)
}

func TestBinarySnapshotSessionOnlyAndEmpty(t *testing.T) {
	t.Parallel()
	full := storedSnapshot()
	s := forkengine.Snapshot{Version: full.Version, Session: full.Session}
	_, back := binaryRoundTrip(t, s)
	require.Equal(t, s, back)
	require.Nil(t, back.Turns)
	require.Nil(t, back.Messages)

	s.Turns, s.Messages = []forkengine.Turn{}, []forkengine.Message{}
	_, back = binaryRoundTrip(t, s)
	require.Equal(t, s, back)
	require.NotNil(t, back.Turns)
	require.NotNil(t, back.Messages)
}

// What the compact content cannot hold exactly is stored as JSON on SQLite too, and PostgreSQL
// always stores JSON text.
func TestBinarySnapshotOnlyWhereItFits(t *testing.T) {
	t.Parallel()
	s := storedSnapshot()
	s.Messages[0].CreatedAt = s.Messages[0].CreatedAt.Add(1) // nanoseconds
	enc, back := binaryRoundTrip(t, s)
	require.True(t, strings.HasPrefix(enc.text, "{"), enc.text)
	require.IsType(t, "", enc.value)
	require.Equal(t, canonical(t, s), back)

	enc, err := encodeSnapshotFor(postgresDialect, forkengine.ForkOperation{ID: "op", Snapshot: storedSnapshot()})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(enc.text, compactSnapshotPrefix), enc.text)
	require.Equal(t, enc.text, enc.value)
}

// A damaged binary snapshot is an error, never a panic or a partial snapshot.
func TestBinarySnapshotRefusesDamage(t *testing.T) {
	t.Parallel()
	enc, _ := binaryRoundTrip(t, storedSnapshot())
	for n := 1; n < len(enc.text); n++ {
		_, err := decodeSnapshot(enc.text[:n])
		require.Error(t, err, "truncated to %d of %d bytes", n, len(enc.text))
	}
	_, err := decodeSnapshot(enc.text + "x")
	require.Error(t, err, "trailing bytes")
	_, err = decodeSnapshot(string([]byte{binarySnapshotMagic, 99}))
	require.ErrorContains(t, err, "format 99")
	// Version 1, nine empty strings, no settings, not visible, times 0, not deleted, a transcript
	// of 2^32-1 turns in five bytes.
	huge := string([]byte{binarySnapshotMagic, binarySnapshotFormat, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0xff, 0xff, 0xff, 0xff, 0x0f})
	session, err := decodeSnapshot(huge[:len(huge)-6] + "\x00")
	require.NoError(t, err, "the same bytes without the transcript are a valid session-only snapshot")
	require.Nil(t, session.Turns)
	_, err = decodeSnapshot(huge)
	require.Error(t, err, "a turn count the bytes cannot hold")
}

// On SQLite the stored column holds the binary form as a BLOB, and a store that did not write it
// (so has nothing cached) reads the snapshot back exactly.
func TestSQLiteStoresBinarySnapshotsAsBlobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := sqliteConfig(t)
	db := openTest(t, cfg)
	s := storedSnapshot()
	op := forkengine.ForkOperation{WorkspaceID: "ws", ID: "op1", RequestID: "req1", SourceSessionID: "s1",
		ThroughTurnID: "turn-2", TargetSessionID: "dst", Status: forkengine.StatusPrepared, Snapshot: s,
		SnapshotHash: "hash-1", CreatedAt: s.Session.CreatedAt, UpdatedAt: s.Session.CreatedAt}
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error { return tx.InsertOperation(ctx, op) }))
	var kind string
	require.NoError(t, db.gorm.Raw("SELECT typeof(snapshot) FROM fork_operation_snapshots WHERE operation_id = ?", op.ID).Scan(&kind).Error)
	require.Equal(t, "blob", kind)

	reader := openTest(t, Config{DSN: cfg.DSN, ReadOnly: true, Logger: quietLog})
	got, err := reader.GetOperation(ctx, "ws", op.ID)
	require.NoError(t, err)
	require.Equal(t, s, got.Snapshot)
}

// forkSizedSnapshot is the snapshot of bench/engine's fork: 20 settled, bound turns × 5 messages,
// message ids UUID-long.
func forkSizedSnapshot() forkengine.Snapshot {
	at := fromMicros(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixMicro())
	s := forkengine.Snapshot{Version: 1, Session: forkengine.Session{WorkspaceID: "bench", ID: "source-0",
		Kind: forkengine.SessionRoot, Provider: "simulated", ProviderSessionID: "provider-source-0",
		Title: "Benchmark source", Settings: json.RawMessage(`{}`), Visible: true, CreatedAt: at, UpdatedAt: at}}
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("source-0/turn-%02d", i)
		s.Turns = append(s.Turns, forkengine.Turn{WorkspaceID: "bench", SessionID: "source-0", ID: id, Sequence: int64(i),
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, Origin: "report", StartedAt: at,
			SettledAt: &at, UpdatedAt: at, ProviderTurnID: "provider-" + id,
			ProviderTurnBinding: json.RawMessage(`{"checkpoint":"` + id + `"}`)})
		for m := range 5 {
			s.Messages = append(s.Messages, forkengine.Message{WorkspaceID: "bench", SessionID: "source-0", TurnID: id,
				ID: fmt.Sprintf("c9234f3a-d023-4349-8418-%012d", i*5+m), Position: int64(i*5 + m),
				Role: forkengine.RoleAssistant, Content: fmt.Sprintf("%s: message %d with a few words of content to copy", id, m),
				CreatedAt: at})
		}
	}
	return s
}

// BenchmarkSnapshotEncoding encodes and decodes a fork-sized snapshot in the form each dialect
// stores: compact JSON (PostgreSQL) and binary (SQLite).
func BenchmarkSnapshotEncoding(b *testing.B) {
	op := forkengine.ForkOperation{ID: "op", Snapshot: forkSizedSnapshot()}
	for _, d := range []dialect{postgresDialect, sqliteDialect} {
		enc, err := encodeSnapshotFor(d, op)
		require.NoError(b, err)
		b.Run(d.name+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encodeSnapshotFor(d, op); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(enc.text)), "bytes")
		})
		b.Run(d.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeSnapshot(enc.text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
