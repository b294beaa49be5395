package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
)

// dialect is what differs between the databases; the SQL itself is shared.
type dialect struct {
	name string
	// maxParams bounds the ids of one IN list; longer lists are split into several statements.
	maxParams int
	// jsonIDLists: a list of ids (inList, idsCTE) is bound as one JSON array read with json_each
	// (SQLite; see idList).
	jsonIDLists   bool
	dialector     func(dsn string) gorm.Dialector
	connString    func(cfg Config) (string, error)
	configurePool func(*sql.DB, Config)
	verify        func(ctx context.Context, db *gorm.DB) error
	// advisoryLocks: Tx.Lock takes advisory locks (PostgreSQL); otherwise writers are
	// serialised already and it does nothing.
	advisoryLocks bool
	// skipLocked: the database locks rows a SELECT names (PostgreSQL): lease claims select with
	// FOR UPDATE SKIP LOCKED, a purge locks the sessions it makes roots again.
	skipLocked bool
	// abortsOnError: a failed statement poisons the whole transaction (PostgreSQL), so statements
	// that may hit a unique index run under a savepoint.
	abortsOnError bool
	// numbered: the driver wants $1, $2, ... where the shared SQL says ? (PostgreSQL).
	numbered bool
	// plusParams: every ? is sent as +? (SQLite), so a cached statement is not compiled again on
	// every run (see placeholders).
	plusParams bool
	// writesIgnoreCancel: a fixed write runs on a context without cancellation once the caller's
	// is checked (SQLite). mattn/go-sqlite3 runs every exec on a cancellable context on a goroutine
	// of its own, and inside a transaction that took the write lock at BEGIN a write never waits
	// for a lock, so cancelling it midway bought nothing but that goroutine per statement.
	writesIgnoreCancel bool
	// lateralJoins: per-session turn reads join a LATERAL subquery per id (PostgreSQL, whose
	// planner would otherwise reorder the join; see queries_turn_seeks.go).
	lateralJoins bool
	// binarySnapshots: snapshots are stored in the binary encoding, as BLOBs (SQLite; a
	// PostgreSQL TEXT column cannot hold arbitrary bytes). See snapshot_binary.go.
	binarySnapshots bool
}

var numberedSQL, plusSQL sync.Map // SQL with ? → the same with $n, with +?

// placeholders returns query as the driver takes it. The shared SQL has no ? inside literals.
//
// On SQLite each ? becomes +?, the same value (unary plus is a no-op on every type and leaves the
// column's affinity to apply as before, and an index is still sought by it). Why: when SQLite
// plans a join, or a LIMIT, it looks at the values bound to bare parameters (whether one is 0 or
// 1, say) and marks the statement to be compiled again when they change; mattn/go-sqlite3 clears
// the bindings of a cached statement before each run (sqlite3_clear_bindings), which expires
// every statement so marked, so such a statement was parsed and planned again on every run, its
// statement cache notwithstanding. The planner does not look through a unary plus. A page of
// twenty inherited turns' messages spent more time compiling than reading: its part that reads
// adopted turns, which finds none, cost 106 µs instead of 12 (BenchmarkTurnsPage).
func (d dialect) placeholders(query string) string {
	switch {
	case d.numbered:
		return rewritePlaceholders(&numberedSQL, query, func(n int) string { return "$" + strconv.Itoa(n) })
	case d.plusParams:
		return rewritePlaceholders(&plusSQL, query, func(int) string { return "+?" })
	}
	return query
}

// rewritePlaceholders replaces the nth ? of query with param(n), remembering the result in cache.
func rewritePlaceholders(cache *sync.Map, query string, param func(n int) string) string {
	if s, ok := cache.Load(query); ok {
		return s.(string)
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString(param(n))
			continue
		}
		b.WriteRune(r)
	}
	cache.Store(query, b.String())
	return b.String()
}

// sqliteParams are applied by mattn/go-sqlite3 to every new connection: WAL lets readers run
// beside the writer; foreign keys are off by default in SQLite; busy_timeout waits for another
// process's lock instead of failing; _txlock=immediate takes the write lock at BEGIN, so two
// writers never deadlock upgrading read locks; synchronous=NORMAL is durable against process
// crashes in WAL mode (only an OS crash can lose the last commits) and avoids an fsync per commit;
// the statement cache keeps prepared statements per connection, since parsing dominated writes.
const sqliteParams = "_journal_mode=WAL&_foreign_keys=on&_busy_timeout=5000&_txlock=immediate&_synchronous=NORMAL&_stmt_cache_size=256"

// sqliteDSN turns a file path (or a "file:" URI, taken as is) into a URI with sqliteParams. In a
// URI '?' starts the parameters, '#' a fragment and '%' an escape, so a path's own are escaped.
func sqliteDSN(path string) string {
	if !strings.HasPrefix(path, "file:") {
		path = "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + sqliteParams
}

// sqliteConns is the SQLite pool's size: one writer at a time anyway; a few connections let
// reads run beside it. (A file opened for writing has one more, the checkpointer's.)
const sqliteConns = 4

var sqliteDialect = dialect{
	name:        DriverSQLite,
	maxParams:   900, // well under SQLite's bound-variable limit, leaving room for the other arguments
	jsonIDLists: true,
	dialector: func(dsn string) gorm.Dialector {
		return sqlite.New(sqlite.Config{DriverName: sqliteDriverName, DSN: dsn})
	},
	connString: func(cfg Config) (string, error) {
		if cfg.ReadOnly {
			return sqliteDSN(cfg.DSN) + "&mode=ro", nil
		}
		return sqliteDSN(cfg.DSN), nil
	},
	configurePool: func(db *sql.DB, _ Config) {
		db.SetMaxOpenConns(sqliteConns)
		db.SetMaxIdleConns(sqliteConns)
		db.SetConnMaxIdleTime(5 * time.Minute)
	},
	verify:             verifySQLite,
	writesIgnoreCancel: true,
	binarySnapshots:    true,
	plusParams:         true,
}

// verifySQLite refuses a database on which WAL or foreign keys silently did not take effect
// (for example a file system without shared memory support).
func verifySQLite(ctx context.Context, db *gorm.DB) error {
	var mode string
	if err := db.WithContext(ctx).Raw("PRAGMA journal_mode").Scan(&mode).Error; err != nil {
		return fmt.Errorf("read sqlite journal mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("sqlite journal mode is %q, want wal", mode)
	}
	var fk int
	if err := db.WithContext(ctx).Raw("PRAGMA foreign_keys").Scan(&fk).Error; err != nil {
		return fmt.Errorf("read sqlite foreign_keys: %w", err)
	}
	if fk != 1 {
		return fmt.Errorf("sqlite foreign keys are off")
	}
	return nil
}

var postgresDialect = dialect{
	name:       DriverPostgres,
	maxParams:  20000, // PostgreSQL allows 65535 parameters per statement
	dialector:  func(dsn string) gorm.Dialector { return postgres.Open(dsn) },
	connString: postgresConnString,
	configurePool: func(db *sql.DB, cfg Config) {
		n := cfg.MaxOpenConns
		if n <= 0 {
			n = DefaultPostgresPool
		}
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(max(1, n/2))
		db.SetConnMaxLifetime(30 * time.Minute)
	},
	verify:        func(context.Context, *gorm.DB) error { return nil },
	advisoryLocks: true,
	skipLocked:    true,
	abortsOnError: true,
	numbered:      true,
	lateralJoins:  true,
}

// postgresConnString adds the statement timeout to a postgres:// URL as a run-time parameter
// (pgx sends unknown URL parameters to the server as settings), unless the URL sets one.
func postgresConnString(cfg Config) (string, error) {
	u, err := url.Parse(cfg.DSN)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%w: postgres DSN must be a postgres:// URL (%v)", ErrConfig, err)
	}
	timeout := cfg.StatementTimeout
	if timeout == 0 {
		timeout = DefaultStatementTimeout
	}
	q := u.Query()
	if timeout > 0 && q.Get("statement_timeout") == "" {
		q.Set("statement_timeout", strconv.FormatInt(timeout.Milliseconds(), 10))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
