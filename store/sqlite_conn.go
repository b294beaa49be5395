package store

import (
	"context"
	"database/sql"
	"fmt"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// sqliteDriverName is mattn/go-sqlite3 registered once more with a hook that sets the
// per-connection pragmas the DSN cannot carry.
const sqliteDriverName = "sqlite3_forkgraph"

// walAutocheckpointPages is the log size (4 KiB pages) at which a commit copies the log back
// into the database file itself, SQLite's autocheckpoint. It is a backstop: the checkpointer
// (sqlite_checkpoint.go) copies the log beside the writers and starts it over at
// defaultCheckpointPolicy.restartFrames, a third of this, so no commit pays for a checkpoint
// unless the checkpointer has fallen far behind (a reader holding an old snapshot for a long
// time). At this size the log file can reach ~200 MB before a commit steps in.
const walAutocheckpointPages = 48000

// sqliteConnPragmas run on every new connection. temp_store=MEMORY keeps the temporary b-trees
// of sorts and IN lists in memory; neither pragma touches durability (WAL and
// synchronous=NORMAL come from the DSN).
var sqliteConnPragmas = fmt.Sprintf("PRAGMA wal_autocheckpoint = %d; PRAGMA temp_store = MEMORY", walAutocheckpointPages)

func init() {
	sql.Register(sqliteDriverName, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		if _, err := c.Exec(sqliteConnPragmas, nil); err != nil {
			return fmt.Errorf("set sqlite connection pragmas: %w", err)
		}
		return nil
	}})
}

// Checkpoint copies the whole SQLite write-ahead log into the database file and truncates the
// log, so whatever runs next does not pay for the checkpoint the last writes left pending. It
// fails when a reader kept the log from being copied completely. On PostgreSQL it does nothing.
func (db *DB) Checkpoint(ctx context.Context) error {
	if db.dialect.name != DriverSQLite {
		return nil
	}
	return db.ckpt.exclusive(func() error {
		var busy, logPages, copied int
		row := db.gorm.WithContext(ctx).Raw("PRAGMA wal_checkpoint(TRUNCATE)").Row()
		if err := row.Scan(&busy, &logPages, &copied); err != nil {
			return fmt.Errorf("checkpoint sqlite: %w", err)
		}
		if busy != 0 {
			return fmt.Errorf("checkpoint sqlite: blocked by a reader (%d of %d pages copied)", copied, logPages)
		}
		return nil
	})
}
