package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// A database from before migration 28 holds, in a committed fork's child, copies of the audit
// messages it inherited. After the migration the child still shows exactly those (its History
// reads none through its segments), and a fork of that child made later reads the root's rows
// through the root's segment and the child's own through the child's, never the child's copies:
// each notice once.
func testAuditPositionsMigration(t *testing.T, cfg Config) {
	ctx := context.Background()
	old := openAtVersion(t, cfg, snapshotRulesMigration.version-1)
	for _, stmt := range []string{
		`INSERT INTO histories (workspace_id, session_id, history_key, boundary, prefix_turns, inherited_turns)
			VALUES ('ws', 'child', 'childkey000', 2, 2, 2)`,
		`INSERT INTO history_segments (workspace_id, session_id, ordinal, history_key, owner_workspace_id, owner_session_id,
			from_sequence, to_sequence, watermark, via) VALUES ('ws', 'child', 0, 'childkey000', 'ws', 'src', 0, 2, 10, '')`,
		`INSERT INTO audit_messages (workspace_id, id, session_id, after_sequence, kind, content, created_at_us) VALUES
			('ws', 's0', 'src', 0, 'model_changed', 'root notice', 1),
			('ws', 'c-copy', 'child', 0, 'model_changed', 'root notice', 1),
			('ws', 'c-own', 'child', 2, 'model_changed', 'child notice', 2)`,
	} {
		require.NoError(t, old.gorm.Exec(stmt).Error)
	}
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	child, found, err := db.HistoryOf(ctx, "ws", "child")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(forkengine.LegacyAuditBound), child.AuditBound)
	got, err := db.AuditMessagesBySessionIDs(ctx, "ws", []string{"child", "src"})
	require.NoError(t, err)
	contents := func(ms []forkengine.AuditMessage) (out []string) {
		for _, m := range ms {
			out = append(out, m.ID+"="+m.Content)
		}
		return out
	}
	require.Equal(t, []string{"c-copy=root notice", "c-own=child notice"}, contents(got["child"]), "the copies, nothing twice")
	require.Equal(t, int64(-1), got["child"][0].Position, "a copy is marked")
	require.Equal(t, int64(0), got["child"][1].Position)
	require.Equal(t, []string{"s0=root notice"}, contents(got["src"]))

	// A fork of the child through its turn 3, committed after the migration.
	grand := forkengine.History{WorkspaceID: "ws", SessionID: "grand", Key: "grandkey000", Boundary: 3, PrefixTurns: 3,
		InheritedTurns: 3, AuditBound: 30, Segments: []forkengine.HistorySegment{
			{OwnerWorkspaceID: "ws", OwnerSessionID: "src", From: 0, To: 2, Watermark: 10, Via: []string{"childkey000"}},
			{OwnerWorkspaceID: "ws", OwnerSessionID: "child", From: 0, To: 3, Watermark: 30}}}
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error { return tx.InsertHistory(ctx, grand) }))
	got, err = db.AuditMessagesBySessionIDs(ctx, "ws", []string{"grand"})
	require.NoError(t, err)
	src := got["grand"]
	require.Len(t, src, 2)
	require.Equal(t, []string{"root notice", "child notice"}, []string{src[0].Content, src[1].Content})
	require.Equal(t, forkengine.PresentAuditMessage(grand, []string{"childkey000"}, forkengine.AuditMessage{ID: "s0"}).ID, src[0].ID)
	require.Equal(t, "grand", src[0].SessionID)
	byID, err := db.AuditMessagesByIDs(ctx, "ws", []string{src[0].ID, src[1].ID, "c-copy"})
	require.NoError(t, err)
	require.Len(t, byID, 3)
	require.Equal(t, src[1], byID[src[1].ID])
}

func TestAuditPositionsMigrationSQLite(t *testing.T) {
	t.Parallel()
	testAuditPositionsMigration(t, sqliteConfig(t))
}

func TestAuditPositionsMigrationPostgres(t *testing.T) {
	requirePostgres(t)
	testAuditPositionsMigration(t, postgresConfig(t))
}
