package resolvers_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/forkgraph/forkgraph/store"
)

const postgresDSNEnv = "FORKGRAPH_TEST_POSTGRES_DSN"

// requirePostgres skips a PostgreSQL case without a server (scripts/test-postgres.sh runs the
// resolvers' PostgreSQL cases with one).
func requirePostgres(t testing.TB) {
	t.Helper()
	if os.Getenv(postgresDSNEnv) == "" {
		t.Skipf("%s is not set; run: eval \"$(scripts/start-postgres.sh)\"", postgresDSNEnv)
	}
}

// postgresTestConfig creates a schema of its own for the test (dropped afterwards) and returns
// a store config whose connections use it.
func postgresTestConfig(t testing.TB) store.Config {
	t.Helper()
	requirePostgres(t)
	base := os.Getenv(postgresDSNEnv)
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	schema := "forkgraph_resolvers_" + hex.EncodeToString(suffix)
	require.NoError(t, admin.Exec("CREATE SCHEMA "+schema).Error)
	t.Cleanup(func() {
		require.NoError(t, admin.Exec("DROP SCHEMA "+schema+" CASCADE").Error)
		if sqlDB, err := admin.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	dsn := base + sep + "search_path=" + schema
	if !strings.Contains(base, "://") {
		dsn = base + " search_path=" + schema
	}
	return store.Config{Driver: store.DriverPostgres, DSN: dsn, Logger: quiet, MaxOpenConns: 8}
}

// tableDigest is a digest of every row of every table of the API's database, read past the
// store: equal digests before and after a refused request prove it changed nothing.
func (a *testAPI) tableDigest() string {
	a.t.Helper()
	raw := a.raw
	raw.mu.Lock() // one digest at a time on the one connection, parallel subtests or not
	defer raw.mu.Unlock()
	a.openRaw()
	ctx := context.Background()
	// On SQLite, PRAGMA data_version on one connection changes whenever another connection
	// commits: unchanged, no row can have changed since the last digest, which is returned
	// without reading the tables again (a refused call in the scope matrix was two full reads).
	var version int64 = -1
	if a.dbCfg.Driver != store.DriverPostgres {
		require.NoError(a.t, raw.conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&version))
		if raw.digest != "" && version == raw.version {
			raw.reused++
			return raw.digest
		}
	}
	listing := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
	if a.dbCfg.Driver == store.DriverPostgres {
		listing = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`
	}
	var tables []string
	list, err := raw.conn.QueryContext(ctx, listing)
	require.NoError(a.t, err)
	for list.Next() {
		var name string
		require.NoError(a.t, list.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(a.t, list.Err())
	require.NoError(a.t, list.Close())
	require.NotEmpty(a.t, tables)
	h := sha256.New()
	for _, table := range tables {
		// Each row hashed from its raw bytes, the row hashes sorted: an order-free digest that
		// scans without converting a value.
		rows, err := raw.conn.QueryContext(ctx, "SELECT * FROM "+table)
		require.NoError(a.t, err)
		cols, err := rows.Columns()
		require.NoError(a.t, err)
		values := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range values {
			ptrs[i] = &values[i]
		}
		var rowHashes [][sha256.Size]byte
		for rows.Next() {
			require.NoError(a.t, rows.Scan(ptrs...))
			rh := sha256.New()
			var size [8]byte
			for _, v := range values {
				binary.LittleEndian.PutUint64(size[:], uint64(len(v)))
				rh.Write(size[:])
				rh.Write(v)
			}
			var sum [sha256.Size]byte
			copy(sum[:], rh.Sum(nil))
			rowHashes = append(rowHashes, sum)
		}
		require.NoError(a.t, rows.Err())
		require.NoError(a.t, rows.Close())
		sort.Slice(rowHashes, func(i, j int) bool { return string(rowHashes[i][:]) < string(rowHashes[j][:]) })
		fmt.Fprintf(h, "%s %d\n", table, len(rowHashes))
		for _, rh := range rowHashes {
			h.Write(rh[:])
		}
	}
	digest := hex.EncodeToString(h.Sum(nil))
	raw.version, raw.digest = version, digest
	raw.read++
	return digest
}

// rawConn is the API's connection to its database that bypasses the store, opened once per API
// and shared by the copies with() makes: one pinned connection, so that data_version compares
// like with like; the last digest taken and the data_version it was read at.
type rawConn struct {
	mu           sync.Mutex
	conn         *sql.Conn
	version      int64
	digest       string
	read, reused int // digests read from the tables, and returned unread (its test counts them)
}

// openRaw opens the API's rawConn on first use; the caller holds its mu.
func (a *testAPI) openRaw() {
	a.t.Helper()
	if a.raw.conn != nil {
		return
	}
	dialector := sqlite.Open("file:" + a.dbCfg.DSN + "?mode=ro")
	if a.dbCfg.Driver == store.DriverPostgres {
		dialector = postgres.Open(a.dbCfg.DSN)
	}
	db, err := gorm.Open(dialector, &gorm.Config{Logger: logger.Discard})
	require.NoError(a.t, err)
	sqlDB, err := db.DB()
	require.NoError(a.t, err)
	sqlDB.SetMaxOpenConns(1)
	conn, err := sqlDB.Conn(context.Background())
	require.NoError(a.t, err)
	a.root.Cleanup(func() {
		_ = conn.Close()
		_ = sqlDB.Close()
	})
	a.raw.conn = conn
}
