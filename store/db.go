package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Drivers Config.Driver accepts.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Config says which database to open.
type Config struct {
	// Driver is "sqlite" (the default) or "postgres".
	Driver string
	// DSN is the SQLite file path (created if missing) or a PostgreSQL connection string.
	DSN string
	// Logger receives slow-query warnings and migration notes (default slog.Default()).
	Logger *slog.Logger
}

// DB is a forkengine.Store backed by SQLite or PostgreSQL. It is safe for concurrent use.
type DB struct {
	queries
	gorm       *gorm.DB
	log        *slog.Logger
	writeMu    sync.Mutex // serialises Update within the process; the database lock does it across processes
	statements *atomic.Int64
	migrated   int // migrations applied by Open, for tests
}

var _ forkengine.Store = (*DB)(nil)

// ErrConfig is returned by Open for an unusable Config.
var ErrConfig = errors.New("invalid store config")

// Open connects, configures the connection pool and applies pending migrations. It returns
// ErrConfig for a bad Config and ErrSchemaTooNew when the database was migrated by a newer
// forkgraph.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d, err := dialectFor(cfg)
	if err != nil {
		return nil, err
	}
	gdb, err := gorm.Open(d.dialector(cfg.DSN), &gorm.Config{
		SkipDefaultTransaction: true, // every multi-row write already runs inside Update's transaction
		// gorm's own slog logger renders every statement's SQL even when it logs nothing; its
		// classic logger only formats what it prints (slow queries, errors).
		Logger: logger.New(slogWriter{cfg.Logger}, logger.Config{
			SlowThreshold: 200 * time.Millisecond, LogLevel: logger.Warn, IgnoreRecordNotFoundError: true,
			ParameterizedQueries: true, // a slow query's log line must not carry transcript text
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("open %s store: %w", d.name, err)
	}
	db := &DB{gorm: gdb, log: cfg.Logger, statements: new(atomic.Int64)}
	db.queries = queries{db: gdb, dialect: d, snapshots: newSnapshotCache(), statements: db.statements}
	if err := db.init(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) init(ctx context.Context) error {
	if err := db.countStatements(); err != nil {
		return err
	}
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return fmt.Errorf("open %s store: %w", db.dialect.name, err)
	}
	db.dialect.configurePool(sqlDB)
	if err := db.dialect.verify(ctx, db.gorm); err != nil {
		return err
	}
	applied, err := migrate(ctx, db.gorm, db.dialect, db.log)
	if err != nil {
		return err
	}
	db.migrated = applied
	return nil
}

// Close closes the connection pool.
func (db *DB) Close() error {
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return sqlDB.Close()
}

// Statements returns how many SQL statements this DB has executed so far: queries and execs,
// inside transactions too, migrations included; BEGIN and COMMIT are not counted. Tests compare
// two readings to prove batching.
func (db *DB) Statements() int64 { return db.statements.Load() }

// countStatements hooks every gorm processor, so anything that reaches the database is counted
// whether it was built by gorm or written as raw SQL.
func (db *DB) countStatements() error {
	count := func(tx *gorm.DB) {
		if tx.Statement.SQL.Len() > 0 && !tx.DryRun {
			db.statements.Add(1)
		}
	}
	cb := db.gorm.Callback()
	for name, err := range map[string]error{
		"create": cb.Create().After("gorm:create").Register("forkgraph:count_statements", count),
		"query":  cb.Query().After("gorm:query").Register("forkgraph:count_statements", count),
		"update": cb.Update().After("gorm:update").Register("forkgraph:count_statements", count),
		"delete": cb.Delete().After("gorm:delete").Register("forkgraph:count_statements", count),
		"row":    cb.Row().After("gorm:row").Register("forkgraph:count_statements", count),
		"raw":    cb.Raw().After("gorm:raw").Register("forkgraph:count_statements", count),
	} {
		if err != nil {
			return fmt.Errorf("register %s statement counter: %w", name, err)
		}
	}
	return nil
}

// Update runs fn in one transaction serialised against every other writer of the database. It
// commits when fn returns nil, rolls back otherwise and on panic (the panic continues). It returns
// fn's error, or the database error of begin/commit. fn must not call Update.
func (db *DB) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	var pending []cachedSnapshot
	err := db.gorm.WithContext(ctx).Transaction(func(gtx *gorm.DB) error {
		pending = pending[:0]
		if err := db.dialect.lockWriters(gtx); err != nil {
			return fmt.Errorf("take the writer lock: %w", err)
		}
		return fn(&txn{queries: queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, pending: &pending,
			statements: db.statements}})
	})
	if err == nil {
		db.snapshots.put(pending...)
	}
	return err
}

// slogWriter lets gorm's logger print through slog.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Printf(format string, args ...any) {
	w.log.Warn("store: " + strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// dialectFor validates cfg and picks the dialect.
func dialectFor(cfg Config) (dialect, error) {
	switch strings.ToLower(cfg.Driver) {
	case "", DriverSQLite:
		if cfg.DSN == "" {
			return dialect{}, fmt.Errorf("%w: sqlite needs a file path in DSN", ErrConfig)
		}
		return sqliteDialect, nil
	case DriverPostgres:
		if cfg.DSN == "" {
			return dialect{}, fmt.Errorf("%w: postgres needs a connection string in DSN", ErrConfig)
		}
		return postgresDialect, nil
	}
	return dialect{}, fmt.Errorf("%w: unknown driver %q (want sqlite or postgres)", ErrConfig, cfg.Driver)
}
