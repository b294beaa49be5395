package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrDatabaseInUse is returned by Open when another process already serves the SQLite file.
var ErrDatabaseInUse = errors.New("the SQLite database is in use by another forkgraph process")

// fileLock is an exclusive advisory lock (flock) on a file beside the database, held for as
// long as the DB is open. The kernel drops it when the process dies, SIGKILL included, so a
// crashed instance never leaves the file locked.
type fileLock struct{ f *os.File }

// lockSQLiteFile takes the lock for the database at dsn ("<path>.lock"), or fails at once with
// ErrDatabaseInUse: SQLite serves one forkgraph process, because start-up recovery takes over
// every unfinished fork of the file and would turn a live peer's dispatches into unknown
// deliveries. In-memory databases need no lock.
func lockSQLiteFile(dsn string) (*fileLock, error) {
	path := sqliteFilePath(dsn)
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		// The lock file is the first file written beside the database, so its failure is what a
		// mistyped path meets first: name the directory, not a file the user never asked for.
		if dir := filepath.Dir(path); errors.Is(err, fs.ErrNotExist) && !dirExists(dir) {
			return nil, fmt.Errorf("the SQLite file %s cannot be created: its directory %s does not exist", path, dir)
		}
		return nil, fmt.Errorf("open the lock file of %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (run one instance per SQLite file; for several instances use a postgres:// database)",
				ErrDatabaseInUse, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

func dirExists(dir string) bool {
	info, err := os.Stat(dir)
	return err == nil && info.IsDir()
}

// release drops the lock; nil-safe and idempotent.
func (l *fileLock) release() {
	if l == nil || l.f == nil {
		return
	}
	_ = l.f.Close() // closing the descriptor releases the flock
	l.f = nil
}

// sqliteFilePath is the file a SQLite DSN names, or "" for an in-memory database.
func sqliteFilePath(dsn string) string {
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 && strings.HasPrefix(dsn, "file:") {
		if strings.Contains(path[i:], "mode=memory") {
			return ""
		}
		path = path[:i]
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, ":memory:") {
		return ""
	}
	return path
}
