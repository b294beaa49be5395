package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/await"
)

// IsUnavailable tells the errors of a database that cannot serve now (the request may work in a
// moment: UNAVAILABLE, 503) from every other failure, on errors the real drivers return.
func TestIsUnavailableOnSQLiteErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// SQLITE_FULL: the file may not grow past its pages, as on a full disk.
	raw, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "full.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	raw.SetMaxOpenConns(1) // the page limit is a setting of the connection
	_, err = raw.ExecContext(ctx, `CREATE TABLE t (v TEXT)`)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `PRAGMA max_page_count = 2`)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `INSERT INTO t VALUES (?)`, strings.Repeat("x", 64<<10))
	require.Error(t, err)
	require.True(t, IsUnavailable(fmt.Errorf("insert: %w", err)), "SQLITE_FULL: %v", err)

	// SQLITE_CANTOPEN: the database's directory is gone.
	gone, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "missing", "x.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = gone.Close() })
	_, err = gone.ExecContext(ctx, `CREATE TABLE t (v TEXT)`)
	require.Error(t, err)
	require.True(t, IsUnavailable(err), "SQLITE_CANTOPEN: %v", err)

	// What a request or a bug causes is no outage.
	db := openTest(t, migratedSQLite(t))
	err = db.Update(ctx, func(tx forkengine.Tx) error {
		s := forkengine.Session{WorkspaceID: "w", ID: "s", Kind: forkengine.SessionRoot, Provider: "p", Settings: []byte("{}")}
		if err := tx.UpsertSession(ctx, s); err != nil {
			return err
		}
		_, err := tx.InsertMessages(ctx, []forkengine.Message{{WorkspaceID: "w", SessionID: "s", TurnID: "no-such-turn", ID: "m"}})
		return err
	})
	require.ErrorIs(t, err, forkengine.ErrNotFound, "a foreign key violation")
	require.False(t, IsUnavailable(err), "%v", err)
	_, err = raw.ExecContext(ctx, `SELEC 1`)
	require.False(t, IsUnavailable(err), "a syntax error: %v", err)
	for _, other := range []error{errors.New("disk on fire"), context.Canceled, context.DeadlineExceeded, nil} {
		require.False(t, IsUnavailable(other), "%v", other)
	}
}

func TestIsUnavailableOnPostgresErrors(t *testing.T) {
	requirePostgres(t)
	ctx := context.Background()
	// A server that is not there: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = pgx.Connect(ctx, "postgres://forkgraph@"+addr+"/postgres?sslmode=disable&connect_timeout=2")
	require.Error(t, err)
	require.True(t, IsUnavailable(err), "connection refused: %v", err)

	// A connection the server ends (as a restart does, SQLSTATE 57P01), under the store.
	db := openTest(t, postgresConfig(t))
	var pid int
	require.NoError(t, db.gorm.Raw("SELECT pg_backend_pid()").Scan(&pid).Error)
	sqlDB, err := db.gorm.DB()
	require.NoError(t, err)
	sqlDB.SetMaxOpenConns(1) // the next read must use the connection that is ended
	admin, err := pgx.Connect(ctx, postgresConfig(t).DSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close(ctx) })
	_, err = admin.Exec(ctx, "SELECT pg_terminate_backend($1)", pid)
	require.NoError(t, err)
	await.Until(t, 10*time.Second, "a read on the ended connection to fail", func() bool {
		_, err = db.CountSessions(ctx, "w", forkengine.SessionFilter{})
		return err != nil
	})
	require.True(t, IsUnavailable(err), "a terminated connection: %v", err)

	// A refused statement is no outage.
	err = db.gorm.Exec("SELECT * FROM no_such_table").Error
	require.Error(t, err)
	require.False(t, IsUnavailable(err), "%v", err)
}
