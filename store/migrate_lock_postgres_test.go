package store

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// syncLog is a log destination written by one goroutine and read by another.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// An instance that starts while another migrates waits for the migration lock, which is expected:
// it says so at info level, and its wait is not reported as a slow statement (it was a WARN
// "SLOW SQL >= 200ms ... pg_advisory_lock" on an ordinary start of a second instance).
func TestWaitingForTheMigrationLockIsNotASlowQuery(t *testing.T) {
	requirePostgres(t)
	ctx := context.Background()
	cfg := postgresConfig(t)
	// The other instance: it holds the migration lock of this schema on a connection of its own.
	other, err := gorm.Open(postgres.Open(cfg.DSN), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	otherDB, err := other.DB()
	require.NoError(t, err)
	defer otherDB.Close()
	conn, err := otherDB.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SELECT pg_advisory_lock($1, hashtext(current_schema()))", migrationLockClass)
	require.NoError(t, err)

	logs := &syncLog{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opened := make(chan error, 1)
	go func() {
		db, err := Open(ctx, cfg)
		if err == nil {
			err = db.Close()
		}
		opened <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "waiting for it to finish") {
		if time.Now().After(deadline) {
			t.Fatalf("Open did not say it waits for the lock; its log:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond) // polling the log of another goroutine, bounded
	}
	// Hold the lock past gorm's slow-statement threshold (200ms), as a real migration does.
	time.Sleep(300 * time.Millisecond)
	_, err = conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1, hashtext(current_schema()))", migrationLockClass)
	require.NoError(t, err)
	require.NoError(t, <-opened)

	out := logs.String()
	require.Contains(t, out, `level=INFO msg="store: another instance is migrating the schema; waiting for it to finish"`)
	require.Contains(t, out, `msg="store: the other instance finished migrating"`)
	require.NotContains(t, out, "SLOW SQL")
	require.NotContains(t, out, "level=WARN")
}
