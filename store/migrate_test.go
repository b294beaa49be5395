package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
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

func TestMigrationsSQLite(t *testing.T) {
	t.Parallel()
	testMigrations(t, sqliteConfig(t))
}

func TestMigrationsPostgres(t *testing.T) {
	requirePostgres(t)
	testMigrations(t, postgresConfig(t))
}

func TestMigrationVersionsIncrease(t *testing.T) {
	t.Parallel()
	for i := 1; i < len(migrations); i++ {
		require.Greater(t, migrations[i].version, migrations[i-1].version, "migration %d", i)
	}
}

// A database made before snapshots had a table of their own keeps every operation's snapshot.
func TestSnapshotMigrationCarriesExistingSnapshots(t *testing.T) {
	t.Parallel()
	cfg := sqliteConfig(t)
	ctx := context.Background()
	old := openAtVersion(t, cfg, 3) // the schema of a binary from before version 4
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

// Migration 12 only records its version: a database from version 11 keeps its JSON snapshots
// readable and stores new ones in the binary encoding, and a forkgraph that knows only up to
// version 11 refuses the migrated file instead of failing on a snapshot it cannot decode.
func TestBinarySnapshotMigration(t *testing.T) {
	t.Parallel()
	cfg := sqliteConfig(t)
	ctx := context.Background()
	old := openAtVersion(t, cfg, 11)
	s := storedSnapshot()
	operation := func(id string) forkengine.ForkOperation {
		return forkengine.ForkOperation{WorkspaceID: "ws", ID: id, RequestID: "req-" + id, SourceSessionID: "s1",
			ThroughTurnID: "turn-" + id, TargetSessionID: "dst-" + id, Status: forkengine.StatusPrepared, Snapshot: s,
			SnapshotHash: "hash-" + id, CreatedAt: s.Session.CreatedAt, UpdatedAt: s.Session.CreatedAt}
	}
	insertVersion12Operation(t, old, operation("before"), mustCompactJSON(t, s)) // as a version 11 binary wrote it
	require.NoError(t, old.Close())

	db, err := Open(ctx, cfg)
	require.NoError(t, err)
	require.Equal(t, len(migrations)-11, db.migrated)
	require.Equal(t, 12, appliedMigrations(t, db)[11].Version)
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error { return tx.InsertOperation(ctx, operation("after")) }))
	kinds := map[string]string{}
	var rows []struct{ OperationID, Kind string }
	require.NoError(t, db.gorm.Raw("SELECT operation_id, typeof(snapshot) AS kind FROM fork_operation_snapshots").Scan(&rows).Error)
	for _, r := range rows {
		kinds[r.OperationID] = r.Kind
	}
	require.Equal(t, map[string]string{"before": "text", "after": "blob"}, kinds)
	require.NoError(t, db.Close())

	reader := openTest(t, Config{DSN: cfg.DSN, ReadOnly: true, Logger: quietLog})
	for _, id := range []string{"before", "after"} {
		op, err := reader.GetOperation(ctx, "ws", id)
		require.NoError(t, err)
		require.Equal(t, canonical(t, s), canonical(t, op.Snapshot), id)
	}

	cfg.schemaVersion = 11
	_, err = Open(ctx, cfg)
	require.ErrorIs(t, err, ErrSchemaTooNew)
}

func mustCompactJSON(t *testing.T, s forkengine.Snapshot) string {
	t.Helper()
	text, err := encodeSnapshot(forkengine.ForkOperation{ID: "op", Snapshot: s})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(text, compactSnapshotPrefix))
	return text
}

// openBefore opens cfg's database migrated up to, not including, version, as a forkgraph of
// that time left it (openAtVersion), and returns it with the number of migrations it holds.
func openBefore(t *testing.T, cfg Config, version int) (*DB, int) {
	t.Helper()
	old := openAtVersion(t, cfg, version-1)
	return old, old.migrated
}

// insertVersion12Operation writes op and its stored snapshot text as a forkgraph of schema
// version 11 or 12 did: without the derived columns of migration 13, nor migration 16's
// requested_by and acknowledged_by, nor migration 21's target.
func insertVersion12Operation(t *testing.T, db *DB, op forkengine.ForkOperation, snapshot string) {
	t.Helper()
	then := operationsTable.without("requested_by", "acknowledged_by", "target")
	insert := "INSERT INTO fork_operations (" + then.list("") + ") VALUES " + placeholders(len(then.names))
	require.NoError(t, db.gorm.Exec(insert, then.values(&op)...).Error)
	require.NoError(t, db.gorm.Exec(insertSnapshotSQL, op.WorkspaceID, op.ID, snapshot).Error)
}

// testOperationClassesMigration: migration 13 derives activity and holds_target from every
// stored status, and the partial indexes rebuilt on them keep their rules: the recoverable
// operations, the reservation of a target, the one active operation per boundary.
func testOperationClassesMigration(t *testing.T, cfg Config) {
	ctx := context.Background()
	old, _ := openBefore(t, cfg, 13)
	s := storedSnapshot()
	statuses := []forkengine.OperationStatus{forkengine.StatusPrepared, forkengine.StatusDispatching,
		forkengine.StatusProviderAccepted, forkengine.StatusUnknown, forkengine.StatusCommitted, forkengine.StatusFailed}
	for i, status := range statuses {
		id := string(status)
		op := forkengine.ForkOperation{WorkspaceID: "ws", ID: id, RequestID: "req-" + id, SourceSessionID: "src",
			ThroughTurnID: "turn-" + id, TargetSessionID: "dst-" + id, Status: status, Snapshot: s, SnapshotHash: "h",
			CreatedAt: at(i), UpdatedAt: at(i)}
		text, err := encodeSnapshot(op)
		require.NoError(t, err)
		insertVersion12Operation(t, old, op, text)
	}
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	require.Equal(t, len(migrations)-old.migrated, db.migrated)
	for _, status := range statuses {
		var got struct {
			Activity    int64
			HoldsTarget *int64
		}
		require.NoError(t, db.gorm.Raw("SELECT activity, holds_target FROM fork_operations WHERE workspace_id = 'ws' AND id = ?",
			string(status)).Scan(&got).Error)
		require.Equal(t, activityOf(status), got.Activity, status)
		require.Equal(t, holdsTargetOf(status), got.HoldsTarget, status)
	}
	recoverable, err := db.RecoverableOperations(ctx, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	var ids []string
	for _, op := range recoverable {
		ids = append(ids, op.ID)
	}
	require.Equal(t, []string{"prepared", "dispatching", "provider_accepted"}, ids)
	_, err = db.OperationReservingTarget(ctx, "ws", "dst-committed")
	require.NoError(t, err)
	_, err = db.OperationReservingTarget(ctx, "ws", "dst-failed")
	require.ErrorIs(t, err, forkengine.ErrNotFound)
	if db.Driver() == DriverSQLite {
		// A family count below a root still finds unfinished operations through their index.
		var plan []struct{ Detail string }
		require.NoError(t, db.gorm.Raw("EXPLAIN QUERY PLAN "+countFamilyForksSQL, "x", "ws", "ws", "x", "ws").Scan(&plan).Error)
		require.Contains(t, fmt.Sprint(plan), "USING INDEX fork_operations_unfinished_by_source")
	}

	// The unique rule of the active boundary holds on the rebuilt index.
	clash := forkengine.ForkOperation{WorkspaceID: "ws", ID: "clash", RequestID: "req-clash", SourceSessionID: "src",
		ThroughTurnID: "turn-prepared", TargetSessionID: "dst-clash", Status: forkengine.StatusPrepared, Snapshot: s,
		SnapshotHash: "h", CreatedAt: at(9), UpdatedAt: at(9)}
	err = db.Update(ctx, func(tx forkengine.Tx) error { return tx.InsertOperation(ctx, clash) })
	require.ErrorIs(t, err, forkengine.ErrDuplicate)
}

func TestOperationClassesMigrationSQLite(t *testing.T) {
	t.Parallel()
	testOperationClassesMigration(t, sqliteConfig(t))
}

func TestOperationClassesMigrationPostgres(t *testing.T) {
	requirePostgres(t)
	testOperationClassesMigration(t, postgresConfig(t))
}
