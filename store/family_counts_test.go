package store

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A database made before the per-family counts gets them from its existing operations and
// lineages, so titles keep their numbering across the upgrade.
func TestFamilyCountMigrationCountsExistingForks(t *testing.T) {
	t.Parallel()
	cfg := sqliteConfig(t)
	ctx := context.Background()
	old := openAtVersion(t, cfg, 5) // the schema of a binary from before version 6
	for _, f := range []struct{ ws, id, source, target, status string }{
		{"ws", "to-a", "root", "a", "committed"}, {"ws", "to-b", "a", "b", "committed"},
		{"ws", "to-p", "root", "p", "failed"}, {"ws", "to-q", "b", "q", "prepared"},
		{"ws", "to-y", "x", "y", "unknown"}, {"other", "to-a", "root", "a", "committed"},
	} {
		require.NoError(t, old.gorm.Exec(`INSERT INTO fork_operations (workspace_id, id, request_id, request_hash,
			source_session_id, target_session_id, through_turn_id, target_turn_id, source_provider_session_id,
			source_provider_turn_id, provider, driver_kind, driver_version, status, error, target_title,
			target_provider_session_id, state_binding_mode, receipt, snapshot_hash, created_at_us, updated_at_us)
			VALUES (?, ?, ?, 'h', ?, ?, 'turn', '', 'ps', 'pt', 'sim', 'k', '1', ?, '', '', '', '', '', 'sh', 1, 1)`,
			f.ws, f.id, "req-"+f.id, f.source, f.target, f.status).Error)
		if f.status == "committed" {
			require.NoError(t, old.gorm.Exec(`INSERT INTO lineages (workspace_id, target_session_id, operation_id,
				source_session_id, source_turn_id, target_turn_id, forked_at_us) VALUES (?, ?, ?, ?, 'turn', 't', 1)`,
				f.ws, f.target, f.id, f.source).Error)
		}
	}
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	require.Equal(t, len(migrations)-5, db.migrated)
	for _, c := range []struct {
		ws, root string
		want     int
	}{{"ws", "root", 3}, {"ws", "a", 2}, {"ws", "x", 1}, {"ws", "lonely", 0}, {"other", "root", 1}} {
		n, err := db.CountFamilyForks(ctx, c.ws, c.root)
		require.NoError(t, err)
		require.Equal(t, c.want, n, "family of %s in %s", c.root, c.ws)
	}
}
