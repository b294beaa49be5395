package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

type appliedMigration struct {
	Version     int
	Name        string
	AppliedAtUs int64
}

func appliedMigrations(t *testing.T, db *DB) []appliedMigration {
	t.Helper()
	var rows []appliedMigration
	require.NoError(t, db.gorm.Raw("SELECT version, name, applied_at_us FROM schema_migrations ORDER BY version").Scan(&rows).Error)
	return rows
}

func testMigrations(t *testing.T, cfg Config) {
	ctx := context.Background()
	first, err := Open(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, len(migrations), first.migrated, "a new database gets every migration")
	before := appliedMigrations(t, first)
	require.Len(t, before, len(migrations))
	for i, m := range migrations {
		require.Equal(t, m.version, before[i].Version)
	}
	require.NoError(t, first.Close())

	again := openTest(t, cfg)
	require.Zero(t, again.migrated, "reopening runs nothing")
	require.Equal(t, before, appliedMigrations(t, again), "and rewrites nothing")

	newer := migrations[len(migrations)-1].version + 1
	require.NoError(t, again.gorm.Exec("INSERT INTO schema_migrations (version, name, applied_at_us) VALUES (?, 'from the future', 0)", newer).Error)
	require.NoError(t, again.Close())
	_, err = Open(ctx, cfg)
	require.ErrorIs(t, err, ErrSchemaTooNew)
	require.ErrorContains(t, err, fmt.Sprintf("version %d", newer))
}

func TestMigrationsSQLite(t *testing.T) { testMigrations(t, sqliteConfig(t)) }

func TestMigrationsPostgres(t *testing.T) {
	requirePostgres(t)
	testMigrations(t, postgresConfig(t))
}

func TestMigrationVersionsIncrease(t *testing.T) {
	for i := 1; i < len(migrations); i++ {
		require.Greater(t, migrations[i].version, migrations[i-1].version, "migration %d", i)
	}
}

// A database made before snapshots had a table of their own keeps every operation's snapshot.
func TestSnapshotMigrationCarriesExistingSnapshots(t *testing.T) {
	cfg := sqliteConfig(t)
	ctx := context.Background()
	full := migrations
	migrations = full[:3] // the schema of a binary from before version 4
	old, err := Open(ctx, cfg)
	migrations = full
	require.NoError(t, err)
	require.NoError(t, old.gorm.Exec(`INSERT INTO fork_operations (workspace_id, id, request_id, request_hash,
		source_session_id, target_session_id, through_turn_id, target_turn_id, source_provider_session_id,
		source_provider_turn_id, provider, driver_kind, driver_version, status, error, target_title,
		target_provider_session_id, state_binding_mode, receipt, snapshot, snapshot_hash, created_at_us, updated_at_us)
		VALUES ('ws', 'op', 'req', 'h', 's', 't', 'turn', '', 'ps', 'pt', 'sim', 'k', '1', 'prepared', '', '', '', '', '',
		'{"version":1,"session":{"id":"s","title":"kept"},"turns":[{"id":"turn"}]}', 'sh', 1, 1)`).Error)
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	require.Equal(t, len(migrations)-3, db.migrated)
	op, err := db.GetOperation(ctx, "ws", "op")
	require.NoError(t, err)
	require.Equal(t, "kept", op.Snapshot.Session.Title)
	require.Equal(t, "turn", op.Snapshot.Turns[0].ID)
	require.Equal(t, "sh", op.SnapshotHash)
}
