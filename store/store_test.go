package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
	"github.com/forkgraph/forkgraph/internal/dbtemplate"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// sqliteConfig returns a config for a fresh SQLite file in the test's temp dir.
func sqliteConfig(t testing.TB) Config {
	return Config{DSN: filepath.Join(t.TempDir(), "forkgraph.db"), Logger: quietLog}
}

func openTest(t *testing.T, cfg Config) *DB {
	t.Helper()
	db, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

// openAtVersion opens cfg's database as a forkgraph that knew the migrations up to version only
// (Config.schemaVersion): the schema of an older binary, to write rows as it did before
// reopening with every migration. The caller closes it.
func openAtVersion(t *testing.T, cfg Config, version int) *DB {
	t.Helper()
	cfg.schemaVersion = version
	db, err := Open(context.Background(), cfg)
	require.NoError(t, err)
	return db
}

// upsertSessionAtVersion writes s in tx as a forkgraph of schema version did: without the
// columns of the sessions table that later migrations added (laterSessionColumns).
func upsertSessionAtVersion(ctx context.Context, tx forkengine.Tx, version int, s forkengine.Session) error {
	t := sessionsTable.without(laterSessionColumns(version)...)
	old := tx.(*txn)
	_, err := old.execFixed(old.with(ctx), upsertSQL(t.name, t.names, t.key...), t.values(&s)...)
	return err
}

// laterSessionColumns are the columns the migrations after version add to sessions, read from
// their statements, so a new Session field needs no line in the tests that write old rows.
func laterSessionColumns(version int) []string {
	var names []string
	for _, m := range migrations {
		if m.version <= version {
			continue
		}
		for _, stmt := range m.statements {
			if match := addSessionColumn.FindStringSubmatch(stmt); match != nil {
				names = append(names, match[1])
			}
		}
	}
	return names
}

var addSessionColumn = regexp.MustCompile(`^ALTER TABLE sessions ADD COLUMN (\w+)`)

func TestSQLiteContract(t *testing.T) {
	t.Parallel()
	forkenginetest.RunStoreTests(t, func(t *testing.T) forkengine.Store { return openTest(t, migratedSQLite(t)) })
}

// migratedSQLite is sqliteConfig with its file already at the latest schema: a copy of the one
// file this test process migrated (internal/dbtemplate), for the tests of what a store does on a
// fresh database. The tests of the migrations take sqliteConfig.
func migratedSQLite(t testing.TB) Config {
	t.Helper()
	path := dbtemplate.Copy(t, "store", t.TempDir(), "forkgraph.db", func(path string) error {
		db, err := Open(context.Background(), Config{DSN: path, Logger: quietLog})
		if err != nil {
			return err
		}
		return db.Close()
	})
	return Config{DSN: path, Logger: quietLog}
}

// postgresDSNEnv names the server the Postgres tests use; scripts/start-postgres.sh prints it.
const postgresDSNEnv = "FORKGRAPH_TEST_POSTGRES_DSN"

func TestPostgresContract(t *testing.T) {
	requirePostgres(t)
	t.Parallel() // every subtest opens a schema of its own; beside the other PostgreSQL tests it waits on the server, not the CPU
	forkenginetest.RunStoreTests(t, func(t *testing.T) forkengine.Store { return openTest(t, postgresConfig(t)) })
}

func requirePostgres(t *testing.T) {
	if os.Getenv(postgresDSNEnv) == "" {
		t.Skipf("%s is not set; run: eval \"$(scripts/start-postgres.sh)\"", postgresDSNEnv)
	}
}

// postgresConfig creates a schema of its own for the test (dropped afterwards) and returns a
// config whose connections use it.
func postgresConfig(t testing.TB) Config {
	t.Helper()
	base := os.Getenv(postgresDSNEnv)
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	schema := "forkgraph_test_" + hex.EncodeToString(suffix)
	require.NoError(t, admin.Exec("CREATE SCHEMA "+schema).Error)
	t.Cleanup(func() {
		require.NoError(t, admin.Exec("DROP SCHEMA "+schema+" CASCADE").Error)
		if sqlDB, err := admin.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	return Config{Driver: DriverPostgres, DSN: withSearchPath(base, schema), Logger: quietLog}
}

// withSearchPath adds a search_path run-time parameter to a URL or key=value connection string.
func withSearchPath(dsn, schema string) string {
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + schema
	}
	return dsn + " search_path=" + schema
}

// upsertTurnWithoutDetails writes t as a binary from before typed parts and turn details did: without the columns of a
// turn's details (typed_columns.go), which a database opened at an older version lacks.
func upsertTurnWithoutDetails(ctx context.Context, tx forkengine.Tx, t forkengine.Turn) error {
	details := map[string]bool{turnErrorColumn.name: true, fileChangesColumn.name: true, completedCommandColumn.name: true}
	var names, marks []string
	var values []any
	all := turnsTable.values(&t)
	for i, name := range turnsTable.names {
		if !details[name] {
			names, marks, values = append(names, name), append(marks, "?"), append(values, all[i])
		}
	}
	return tx.(*txn).db.WithContext(ctx).Exec("INSERT INTO turns ("+strings.Join(names, ", ")+") VALUES ("+
		strings.Join(marks, ", ")+")", values...).Error
}
