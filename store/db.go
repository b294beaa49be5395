package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
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
	// Driver is "sqlite" or "postgres"; empty picks postgres for a postgres:// or
	// postgresql:// DSN and sqlite otherwise.
	Driver string
	// DSN is the SQLite file path (created if missing) or a PostgreSQL connection URL.
	DSN string
	// Logger receives slow-query warnings and migration notes (default slog.Default()).
	Logger *slog.Logger
	// MaxOpenConns bounds the PostgreSQL connection pool (default DefaultPostgresPool; the
	// event listener holds one more). SQLite keeps its own small pool: it has one writer anyway.
	MaxOpenConns int
	// ReadOnly opens a SQLite file for reading only, beside the process that serves it: no lock,
	// no migrations, every write refused by SQLite. For inspection tools and tests.
	ReadOnly bool
	// StatementTimeout bounds one PostgreSQL statement (default DefaultStatementTimeout; negative:
	// none), so a stuck query cannot hold a connection and its locks for ever.
	StatementTimeout time.Duration

	// checkpoints replaces defaultCheckpointPolicy (tests).
	checkpoints *checkpointPolicy
	// schemaVersion, when set (tests), makes Open behave as a forkgraph that knows the
	// migrations up to this version only: it migrates that far, and refuses a newer database.
	schemaVersion int
}

// Defaults of Config.
const (
	DefaultPostgresPool     = 10
	DefaultStatementTimeout = 30 * time.Second
)

// IsPostgresURL reports whether dsn names a PostgreSQL database rather than a SQLite file.
func IsPostgresURL(dsn string) bool {
	lower := strings.ToLower(dsn)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

// urlScheme matches the start of a URL ("mysql://", "sqlite://"): a DSN that has one is a URL,
// never a file name.
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// CheckDSN reports whether Open can tell what dsn names: a PostgreSQL database (a postgres:// or
// postgresql:// URL), or a SQLite file (a path, or a file: URI). Any other URL is refused with
// ErrConfig and the forms accepted, instead of being taken for a file name.
func CheckDSN(dsn string) error {
	switch {
	case dsn == "":
		return fmt.Errorf("%w: no database named; give a SQLite file path (./forkgraph.db) or a postgres:// URL", ErrConfig)
	case IsPostgresURL(dsn):
		return nil
	case urlScheme.MatchString(dsn):
		scheme, _, _ := strings.Cut(dsn, "://")
		return fmt.Errorf("%w: unknown database URL scheme %q; give a SQLite file path (./forkgraph.db, or a file: URI) "+
			"or a postgres:// (postgresql://) URL", ErrConfig, scheme)
	}
	return nil
}

// DB is a forkengine.Store backed by SQLite or PostgreSQL. It is safe for concurrent use.
type DB struct {
	queries
	gorm *gorm.DB
	log  *slog.Logger
	dsn  string
	// writeMu serialises Update within the process on SQLite, which has one writer at a time
	// anyway (BEGIN IMMEDIATE); waiting here is cheaper than in SQLite's busy loop, and the
	// writes that queue for it are committed together (group). PostgreSQL writers run
	// concurrently, kept apart by row locks, Tx.Lock and unique indexes.
	writeMu    sync.Mutex
	group      writeGroup // SQLite: the writes queued for writeMu, committed together
	statements *atomic.Int64
	rows       *atomic.Int64 // rows returned by the fixed reads (RowsRead)
	retries    atomic.Int64  // transactions run again after a deadlock or serialisation failure
	migrated   int           // migrations applied by Open, for tests
	exclusive  *fileLock     // SQLite: the lock that keeps a second process off the file
	ckpt       *checkpointer // SQLite file, read-write: copies the WAL back beside the writers
}

var _ forkengine.Store = (*DB)(nil)

// ErrConfig is returned by Open for an unusable Config.
var ErrConfig = errors.New("invalid store config")

// Open connects, configures the connection pool and applies pending migrations. It returns
// ErrConfig for a bad Config, ErrUnreachable when the database does not answer, and
// ErrSchemaTooNew when the database was migrated by a newer forkgraph.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d, err := dialectFor(cfg)
	if err != nil {
		return nil, err
	}
	var exclusive *fileLock
	if d.name == DriverSQLite && !cfg.ReadOnly {
		if exclusive, err = lockSQLiteFile(cfg.DSN); err != nil {
			return nil, err
		}
	}
	dsn, err := d.connString(cfg)
	if err != nil {
		exclusive.release()
		return nil, err
	}
	gdb, err := gorm.Open(d.dialector(dsn), &gorm.Config{
		SkipDefaultTransaction: true, // every multi-row write already runs inside Update's transaction
		DisableAutomaticPing:   true, // connect pings, and says in one line what went wrong
		// gorm's own slog logger renders every statement's SQL even when it logs nothing; its
		// classic logger only formats what it prints (slow queries, errors).
		Logger: logger.New(slogWriter{cfg.Logger}, logger.Config{
			SlowThreshold: 200 * time.Millisecond, LogLevel: logger.Warn, IgnoreRecordNotFoundError: true,
			ParameterizedQueries: true, // a slow query's log line must not carry transcript text
		}),
	})
	if err != nil {
		exclusive.release()
		return nil, fmt.Errorf("open %s store: %w", d.name, err)
	}
	db := &DB{gorm: gdb, log: cfg.Logger, dsn: dsn, statements: new(atomic.Int64), rows: new(atomic.Int64), exclusive: exclusive}
	db.queries = queries{db: gdb, dialect: d, snapshots: newSnapshotCache(), statements: db.statements, rows: db.rows}
	if err := db.init(ctx, cfg); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) init(ctx context.Context, cfg Config) error {
	if err := db.countStatements(); err != nil {
		return err
	}
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return fmt.Errorf("open %s store: %w", db.dialect.name, err)
	}
	db.dialect.configurePool(sqlDB, cfg)
	if err := connect(ctx, sqlDB, db.dialect, cfg.DSN); err != nil {
		return err
	}
	if err := db.dialect.verify(ctx, db.gorm); err != nil {
		return err
	}
	if cfg.ReadOnly {
		return nil
	}
	applied, err := migrateLocked(ctx, db.gorm, db.dialect, db.log, knownMigrations(cfg.schemaVersion))
	if err != nil {
		return err
	}
	db.migrated = applied
	if db.dialect.name == DriverSQLite && sqliteFilePath(cfg.DSN) != "" {
		sqlDB.SetMaxOpenConns(sqliteConns + 1) // the checkpointer holds one of its own
		sqlDB.SetMaxIdleConns(sqliteConns + 1)
		policy := defaultCheckpointPolicy
		if cfg.checkpoints != nil {
			policy = *cfg.checkpoints
		}
		if db.ckpt, err = startCheckpointer(ctx, sqlDB, &db.writeMu, db.log, policy); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the connection pool and, on SQLite, lets another process open the file.
func (db *DB) Close() error {
	defer db.exclusive.release()
	db.ckpt.close()
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return sqlDB.Close()
}

// Driver returns DriverSQLite or DriverPostgres.
func (db *DB) Driver() string { return db.dialect.name }

// Retries returns how many transactions ran again after the database broke a deadlock or a
// serialisation conflict by aborting them.
func (db *DB) Retries() int64 { return db.retries.Load() }

// Statements returns how many SQL statements this DB has executed so far: queries and execs,
// inside transactions too, migrations included; BEGIN and COMMIT are not counted. Tests compare
// two readings to prove batching.
func (db *DB) Statements() int64 { return db.statements.Load() }

// RowsRead returns how many rows the store's fixed reads (every read of turns, messages and
// their pages and counts) have returned so far. Tests compare two readings to prove a read's
// rows are O(page): the rows a statement returns, not those the database visits (the plan tests
// prove the seeks).
func (db *DB) RowsRead() int64 { return db.rows.Load() }

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

// Update runs fn in one transaction. On SQLite it is serialised against every other writer, and
// may share its transaction with the writes queued beside it, each under a savepoint of its own
// (write_group.go): fn's work is still all or nothing, and Update returns only once it is
// committed; fn's statements are then not interrupted when ctx ends (a ctx that ended before fn
// began keeps it from running). On PostgreSQL transactions run side by side (READ COMMITTED),
// kept apart by row locks, Tx.Lock and the unique indexes, and one that the database aborts to
// break a deadlock or a serialisation conflict is run again; on SQLite, fn runs again when the
// group it shared broke. It commits when fn returns nil, rolls back otherwise and on panic (the
// panic continues, on the caller's goroutine). It returns fn's error, or the database error of
// begin/commit. fn must not call Update.
func (db *DB) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	var pending []cachedSnapshot
	err := db.transaction(ctx, func(gtx *gorm.DB) error {
		pending = pending[:0]
		return fn(&txn{queries: queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, pending: &pending,
			statements: db.statements, rows: db.rows}})
	})
	if err == nil {
		db.snapshots.put(pending...)
	}
	return err
}

// maxTxAttempts bounds how often a transaction the database aborted is run again.
const maxTxAttempts = 5

// transaction runs fn in a gorm transaction: on SQLite in a write group (write_group.go), under
// writeMu; on PostgreSQL with retries of aborted transactions.
func (db *DB) transaction(ctx context.Context, fn func(gtx *gorm.DB) error) error {
	if db.dialect.name == DriverSQLite {
		return db.groupWrite(ctx, fn)
	}
	for attempt := 1; ; attempt++ {
		err := db.gorm.WithContext(ctx).Transaction(fn)
		if err == nil || attempt == maxTxAttempts || !isRetryable(err) || ctx.Err() != nil {
			return err
		}
		db.retries.Add(1)
		time.Sleep(time.Duration(attempt*attempt) * time.Millisecond) // let the other side finish
	}
}

// slogWriter lets gorm's logger print through slog.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Printf(format string, args ...any) {
	w.log.Warn("store: " + strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// dialectFor validates cfg and picks the dialect.
func dialectFor(cfg Config) (dialect, error) {
	driver := strings.ToLower(cfg.Driver)
	if driver == "" && IsPostgresURL(cfg.DSN) {
		driver = DriverPostgres
	}
	switch driver {
	case "", DriverSQLite:
		if cfg.DSN == "" {
			return dialect{}, fmt.Errorf("%w: sqlite needs a file path in DSN", ErrConfig)
		}
		if err := CheckDSN(cfg.DSN); err != nil {
			return dialect{}, err
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
