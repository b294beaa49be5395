package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func TestSQLitePragmasHoldOnEveryConnection(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	sqlDB, err := db.gorm.DB()
	require.NoError(t, err)
	// Hold several connections at once, so the check is not answered by one reused connection.
	const conns = 4
	held := make([]interface{ Close() error }, 0, conns)
	for range conns {
		conn, err := sqlDB.Conn(ctx)
		require.NoError(t, err)
		held = append(held, conn)
		var mode string
		var fk, busy, autocheckpoint, tempStore int
		require.NoError(t, conn.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&autocheckpoint))
		require.NoError(t, conn.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&tempStore))
		require.Equal(t, walAutocheckpointPages, autocheckpoint)
		require.Equal(t, 2, tempStore, "temp_store=MEMORY")
		require.NoError(t, conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
		require.NoError(t, conn.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk))
		require.NoError(t, conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy))
		require.Equal(t, "wal", mode)
		require.Equal(t, 1, fk)
		require.Equal(t, 5000, busy)
	}
	for _, c := range held {
		require.NoError(t, c.Close())
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, cfg := range map[string]Config{
		"SQLiteWithoutPath":      {},
		"PostgresWithoutDSN":     {Driver: DriverPostgres},
		"UnknownDriverIsRefused": {Driver: "oracle", DSN: "x"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(ctx, cfg)
			require.ErrorIs(t, err, ErrConfig)
		})
	}
}

// TestSecondOpenOfOneSQLiteFileIsRefused: SQLite serves one process, so a second handle on the
// same file (another process, or a restart while the old one still runs) is refused at once,
// before it could run recovery over the first one's live forks. Closing the first frees it.
func TestSecondOpenOfOneSQLiteFileIsRefused(t *testing.T) {
	t.Parallel()
	cfg := sqliteConfig(t)
	ctx := context.Background()
	first, err := Open(ctx, cfg)
	require.NoError(t, err)
	_, err = Open(ctx, cfg)
	require.ErrorIs(t, err, ErrDatabaseInUse)
	require.ErrorContains(t, err, cfg.DSN)
	require.NoError(t, first.Close())
	again := openTest(t, cfg)
	require.Zero(t, again.migrated, "the next opener finds the schema in place")
}

// TestConcurrentWritersOnSQLiteSerialise: read-modify-write transactions on one handle lose no
// update, and the event cursors they take are dense and in commit order.
func TestConcurrentWritersOnSQLiteSerialise(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	counter := forkengine.Session{WorkspaceID: "ws", ID: "counter", Title: "0"}
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error { return tx.UpsertSession(ctx, counter) }))

	const writers = 30
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() { errs <- incrementTitle(ctx, db) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := db.GetSession(ctx, "ws", "counter")
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(writers), got.Title, "no update was lost")
	events, err := db.EventsAfter(ctx, "ws", 0, 0)
	require.NoError(t, err)
	require.Len(t, events, writers)
	for i := range events {
		require.Equal(t, int64(i+1), events[i].Cursor, "cursors are dense and ordered")
	}
}

// incrementTitle is a read-modify-write that loses updates unless writers are serialised.
func incrementTitle(ctx context.Context, db *DB) error {
	return db.Update(ctx, func(tx forkengine.Tx) error {
		s, err := tx.GetSession(ctx, "ws", "counter")
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(s.Title)
		if err != nil {
			return errors.Join(errors.New("counter title is not a number"), err)
		}
		s.Title = strconv.Itoa(n + 1)
		if err := tx.UpsertSession(ctx, s); err != nil {
			return err
		}
		_, err = tx.AppendEvents(ctx, []forkengine.Event{{WorkspaceID: "ws", Kind: forkengine.EventSessionUpserted, SessionID: "counter"}})
		return err
	})
}

// TestRacingStartsOnOneBoundaryMakeOneOperation races inserts of active operations on one
// boundary: the unique indexes, not application checks, must let exactly one in.
func TestRacingStartsOnOneBoundaryMakeOneOperation(t *testing.T) {
	t.Parallel()
	cfg := sqliteConfig(t)
	one := openTest(t, cfg)
	handles := []*DB{one, one}
	ctx := context.Background()
	const racers = 12
	errs := make(chan error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		db := handles[i%2]
		wg.Go(func() {
			errs <- db.Update(ctx, func(tx forkengine.Tx) error {
				return tx.InsertOperation(ctx, forkengine.ForkOperation{
					WorkspaceID: "ws", ID: "op" + strconv.Itoa(i), RequestID: "req" + strconv.Itoa(i),
					SourceSessionID: "src", ThroughTurnID: "t1", TargetSessionID: "dst" + strconv.Itoa(i),
					Status: forkengine.StatusPrepared,
				})
			})
		})
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		if err == nil {
			won++
			continue
		}
		require.ErrorIs(t, err, forkengine.ErrDuplicate)
	}
	require.Equal(t, 1, won)
	n, err := handles[0].CountOperations(ctx, "ws", forkengine.OperationFilter{})
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestSQLitePathWithURISyntaxCharacters(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "odd dir ?#%", "forkgraph.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	db := openTest(t, Config{DSN: path, Logger: quietLog})
	ctx := context.Background()
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: "s"})
	}))
	_, err := os.Stat(path)
	require.NoError(t, err, "the database is the file at the path given")
}

func TestCheckpointEmptiesTheWriteAheadLog(t *testing.T) {
	t.Parallel()
	cfg := sqliteConfig(t)
	db := openTest(t, cfg)
	ctx := context.Background()
	require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
		return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: "s1", Title: "kept"})
	}))
	wal, err := os.Stat(cfg.DSN + "-wal")
	require.NoError(t, err)
	require.Positive(t, wal.Size(), "the write is in the log, below the autocheckpoint threshold")
	require.NoError(t, db.Checkpoint(ctx))
	wal, err = os.Stat(cfg.DSN + "-wal")
	require.NoError(t, err)
	require.Zero(t, wal.Size())
	s, err := db.GetSession(ctx, "ws", "s1")
	require.NoError(t, err)
	require.Equal(t, "kept", s.Title)
}
