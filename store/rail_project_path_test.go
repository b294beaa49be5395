package store

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The columns the migrations add to sessions are the ones the tests of old rows leave out: the
// helper finds metadata and rail_project_path after their versions and none before.
func TestLaterSessionColumns(t *testing.T) {
	t.Parallel()
	beforeMetadata := laterSessionColumns(sessionMetadataMigration.version - 1)
	require.Subset(t, beforeMetadata, []string{"metadata", "rail_project_path"})
	require.Less(t, slices.Index(beforeMetadata, "metadata"), slices.Index(beforeMetadata, "rail_project_path"), "in migration order")
	beforePath := laterSessionColumns(railProjectPathMigration.version - 1)
	require.Contains(t, beforePath, "rail_project_path")
	require.NotContains(t, beforePath, "metadata")
	require.NotContains(t, laterSessionColumns(railProjectPathMigration.version), "rail_project_path")
}

// A session's rail project path (a later field, snapshot place 16 when it was added) is held by both compact
// encodings, beside metadata or alone: the binary one in format 2 as its bytes, the compact JSON
// under "rp"; a snapshot without it keeps the bytes of the first formats (the frozen tests).
func TestRailProjectPathIsKeptByTheSnapshotEncodings(t *testing.T) {
	t.Parallel()
	const path = "/home/me/projects/a & <b>"
	place := slices.IndexFunc(forkengine.SessionSnapshotFields(), func(f forkengine.SnapshotField) bool { return f.Name == "RailProjectPath" })
	require.GreaterOrEqual(t, place, 0)
	place = forkengine.SessionSnapshotFields()[place].Number // 16 when it was added; one byte
	for name, metadata := range map[string]json.RawMessage{"Alone": nil, "WithMetadata": json.RawMessage(`{"k":1}`)} {
		t.Run(name, func(t *testing.T) {
			s := frozenCodecSnapshot()
			s.Session.RailProjectPath, s.Session.Metadata = path, metadata
			enc, back := binaryRoundTrip(t, s)
			require.Equal(t, []byte{binarySnapshotMagic, binarySnapshotFormatLater}, []byte(enc.text[:2]))
			require.Contains(t, enc.text, string(rune(place))+string(rune(len(path)))+path, "its place, its length, its bytes")
			require.Equal(t, s, back)

			text, back := roundTrip(t, s)
			require.True(t, strings.HasPrefix(text, compactSnapshotPrefix), text)
			require.Contains(t, text, `"rp":"/home/me/projects/a & <b>"`)
			require.Equal(t, canonical(t, s), back)
			require.Equal(t, path, back.Session.RailProjectPath)
		})
	}
}

// Rows written before migration 29 read with no rail project path, and take one afterwards.
func testRailProjectPathMigration(t *testing.T, cfg Config) {
	ctx := context.Background()
	old, _ := openBefore(t, cfg, railProjectPathMigration.version)
	before := legacySession("w", "s1", "p-s1", 1)
	require.NoError(t, old.Update(ctx, func(tx forkengine.Tx) error {
		return upsertSessionAtVersion(ctx, tx, railProjectPathMigration.version-1, before)
	}))
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	got, err := db.GetSession(ctx, "w", "s1")
	require.NoError(t, err)
	require.Equal(t, before, got, "an old row reads as it was, with no rail project path")

	got.RailProjectPath = "/projects/app"
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error { return tx.UpsertSession(ctx, got) }))
	again, err := db.GetSession(ctx, "w", "s1")
	require.NoError(t, err)
	require.Equal(t, "/projects/app", again.RailProjectPath)
}

func TestRailProjectPathMigrationSQLite(t *testing.T) {
	t.Parallel()
	testRailProjectPathMigration(t, sqliteConfig(t))
}

func TestRailProjectPathMigrationPostgres(t *testing.T) {
	requirePostgres(t)
	testRailProjectPathMigration(t, postgresConfig(t))
}
