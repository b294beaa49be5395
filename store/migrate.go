package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// ErrSchemaTooNew is returned by Open when the database holds a migration this binary does not
// know: a newer forkgraph migrated it, and running older code on it could corrupt data.
var ErrSchemaTooNew = errors.New("database schema is newer than this forkgraph")

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version       BIGINT NOT NULL PRIMARY KEY,
	name          TEXT   NOT NULL,
	applied_at_us BIGINT NOT NULL
)`

// knownMigrations are the steps a store opened with cfg knows: all of them, or with
// Config.schemaVersion set (tests), those up to that version, as a binary from then knew them.
func knownMigrations(upTo int) []migration {
	if upTo <= 0 {
		return migrations
	}
	n := 0
	for n < len(migrations) && migrations[n].version <= upTo {
		n++
	}
	return migrations[:n]
}

// migrate applies the pending migrations of steps in order, each in its own transaction, and
// returns how many it applied. Concurrent openers are safe: each step re-checks its version under
// the writer lock before running.
func migrate(ctx context.Context, db *gorm.DB, d dialect, log *slog.Logger, steps []migration) (int, error) {
	db = db.WithContext(ctx)
	if err := db.Exec(createMigrationsTable).Error; err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	current, err := schemaVersion(db)
	if err != nil {
		return 0, err
	}
	latest := steps[len(steps)-1].version
	if current > latest {
		return 0, fmt.Errorf("%w: database is at version %d, this binary knows up to %d", ErrSchemaTooNew, current, latest)
	}
	done, err := appliedVersions(db)
	if err != nil {
		return 0, err
	}
	applied := 0
	for _, m := range steps {
		// A step is pending when its version is not recorded, below the current one too: a
		// version assigned before a later one merged first (migration 30 after 31 and 32) would
		// otherwise never run on a database already at the later version.
		if done[m.version] {
			continue
		}
		ran, err := applyMigration(db, d, m)
		if err != nil {
			return applied, fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
		}
		if ran {
			applied++
			log.Info("store: applied migration", "version", m.version, "name", m.name, "driver", d.name)
		}
	}
	return applied, nil
}

// appliedVersions is the set of versions schema_migrations records.
func appliedVersions(db *gorm.DB) (map[int]bool, error) {
	var versions []int
	if err := db.Raw("SELECT version FROM schema_migrations").Scan(&versions).Error; err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	done := make(map[int]bool, len(versions))
	for _, v := range versions {
		done[v] = true
	}
	return done, nil
}

func schemaVersion(db *gorm.DB) (int, error) {
	var version int
	if err := db.Raw("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&version).Error; err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return version, nil
}

// migrationLockClass namespaces the advisory lock that instances starting together take around
// migrations; the second key is the schema, so separate schemas of one database (tests) do not
// wait for each other.
const migrationLockClass = 0x666f726b // "fork"

// migrateLocked runs migrate so that processes opening one database at the same moment migrate
// it once: on PostgreSQL under a session advisory lock held on one pinned connection (even
// `CREATE TABLE IF NOT EXISTS` races between sessions there); SQLite files have one process.
func migrateLocked(ctx context.Context, db *gorm.DB, d dialect, log *slog.Logger, steps []migration) (int, error) {
	if d.name != DriverPostgres {
		return migrate(ctx, db, d, log, steps)
	}
	var applied int
	err := db.WithContext(ctx).Connection(func(conn *gorm.DB) error {
		if err := takeMigrationLock(conn, log); err != nil {
			return err
		}
		defer conn.Exec("SELECT pg_advisory_unlock(?, hashtext(current_schema()))", migrationLockClass)
		var err error
		applied, err = migrate(ctx, conn, d, log, steps)
		return err
	})
	return applied, err
}

// takeMigrationLock takes the migration lock on conn. An instance starting beside another waits
// here while the other migrates, which is expected: it says so at info level, and waits on a
// session that does not report the wait as a slow statement (gorm's slow-query warning).
func takeMigrationLock(conn *gorm.DB, log *slog.Logger) error {
	var taken bool
	if err := conn.Raw("SELECT pg_try_advisory_lock(?, hashtext(current_schema()))", migrationLockClass).Scan(&taken).Error; err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	if taken {
		return nil
	}
	log.Info("store: another instance is migrating the schema; waiting for it to finish")
	began := time.Now()
	quiet := conn.Session(&gorm.Session{Logger: logger.Discard})
	if err := quiet.Exec("SELECT pg_advisory_lock(?, hashtext(current_schema()))", migrationLockClass).Error; err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	log.Info("store: the other instance finished migrating", "waited", time.Since(began).Round(time.Millisecond))
	return nil
}

// applyMigration runs one step unless another process applied it first.
func applyMigration(db *gorm.DB, d dialect, m migration) (ran bool, err error) {
	err = db.Transaction(func(tx *gorm.DB) error {
		var n int64
		if err := tx.Raw("SELECT COUNT(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		for _, stmt := range m.sql(d.name) {
			if err := tx.Exec(stmt).Error; err != nil {
				return err
			}
		}
		if m.fill != nil {
			if err := m.fill(tx, d); err != nil {
				return err
			}
		}
		ran = true
		return tx.Exec("INSERT INTO schema_migrations (version, name, applied_at_us) VALUES (?, ?, ?)",
			m.version, m.name, time.Now().UnixMicro()).Error
	})
	return ran, err
}
