package multiinstance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"sync"

	"github.com/jackc/pgx/v5"
)

// PostgresDSNEnv names the PostgreSQL server the suite uses; scripts/start-postgres.sh prints it.
const PostgresDSNEnv = "FORKGRAPH_TEST_POSTGRES_DSN"

// NewSchema creates a schema of its own on the server at base and returns a URL whose
// connections use it (search_path, which pgx sends as a run-time parameter) and name themselves
// after it (application_name, so DropConnections can find them), and a function that drops it.
func NewSchema(ctx context.Context, base string) (dsn string, drop func() error, err error) {
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	schema := "forkgraph_multi_" + hex.EncodeToString(suffix)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", base, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("parse %s: %w", base, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", schema)
	u.RawQuery = q.Encode()
	drop = func() error {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		_, err = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		return err
	}
	return u.String(), drop, nil
}

// LockTable takes a lock of mode on table (in the schema dsn names) in a transaction of its own
// and holds it until release is called (once or more), which rolls the transaction back. It simulates a
// database that stops accepting one kind of write, e.g. LockTable(ctx, dsn, "lineages",
// "SHARE") refuses inserts of lineage rows (they wait) while reads go on.
func LockTable(ctx context.Context, dsn, table, mode string) (release func(), err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("begin: %w", err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+pgx.Identifier{table}.Sanitize()+" IN "+mode+" MODE"); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("lock %s: %w", table, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = tx.Rollback(context.Background())
			_ = conn.Close(context.Background())
		})
	}, nil
}

// DropConnections terminates every server connection opened with dsn (NewSchema's URL: those
// whose application_name is its schema), as a database restart or a network cut would, and
// returns how many it ended. The caller's own connection for doing it is not among them.
func DropConnections(ctx context.Context, dsn string) (int, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return 0, err
	}
	name := u.Query().Get("application_name")
	if name == "" {
		return 0, fmt.Errorf("%s names no application_name", dsn)
	}
	q := u.Query()
	q.Set("application_name", name+"_admin")
	u.RawQuery = q.Encode()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return 0, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid()) AS ended`, name).Scan(&n)
	return n, err
}
