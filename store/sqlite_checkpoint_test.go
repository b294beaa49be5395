package store

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// walCounts reads the log's frames and how many of them are copied into the database file, on a
// connection of the pool (a NOOP checkpoint copies nothing).
func walCounts(t *testing.T, db *DB) (frames, copied int) {
	t.Helper()
	sqlDB, err := db.gorm.DB()
	require.NoError(t, err)
	var busy int
	require.NoError(t, sqlDB.QueryRow("PRAGMA wal_checkpoint(NOOP)").Scan(&busy, &frames, &copied))
	return frames, copied
}

// writeSessions commits n transactions, each upserting one session with a title of about a
// page, so every commit appends a few frames to the log.
func writeSessions(t *testing.T, db *DB, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	title := strings.Repeat("x", 4000)
	for i := range n {
		require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
			return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: fmt.Sprintf("%s-%05d", prefix, i), Title: title})
		}))
	}
}

// TestCheckpointerCopiesTheLogBesideTheWriters: a few commits leave the log far below SQLite's
// autocheckpoint, which would not copy them; the checkpointer does, soon after.
func TestCheckpointerCopiesTheLogBesideTheWriters(t *testing.T) {
	cfg := sqliteConfig(t)
	cfg.checkpoints = &checkpointPolicy{interval: 5 * time.Millisecond, settle: time.Millisecond, restartFrames: 1 << 30}
	db := openTest(t, cfg)
	writeSessions(t, db, "s", 20)
	frames, _ := walCounts(t, db)
	require.Positive(t, frames)
	require.Less(t, frames, walAutocheckpointPages, "SQLite's own checkpoint is not what copies these")
	require.Eventually(t, func() bool {
		frames, copied := walCounts(t, db)
		return frames > 0 && copied == frames
	}, 10*time.Second, 5*time.Millisecond, "every frame copied into the database file")
	require.Positive(t, db.ckpt.snapshot().Runs)
}

// TestCheckpointerStartsTheLogOverUnderASteadyLoad: back-to-back commits leave no moment with
// every frame copied, so without the restart step the log would hold every frame written (about
// six a commit here: 60 MB); with it the log starts over near restartFrames, again and again, and
// the file is reused.
func TestCheckpointerStartsTheLogOverUnderASteadyLoad(t *testing.T) {
	cfg := sqliteConfig(t)
	const restartFrames = 200
	cfg.checkpoints = &checkpointPolicy{interval: 2 * time.Millisecond, settle: time.Millisecond, restartFrames: restartFrames}
	db := openTest(t, cfg)
	const commits = 2500
	writeSessions(t, db, "s", commits)
	st := db.ckpt.snapshot()
	require.GreaterOrEqual(t, st.Restarts, int64(2), "%+v", st)
	require.Less(t, st.MaxFrames, commits, "the log never held the frames of every commit (%+v)", st)
	wal, err := os.Stat(cfg.DSN + "-wal")
	require.NoError(t, err)
	require.Less(t, wal.Size(), int64(commits)*3*4096, "the log file was reused, not grown by every commit (%+v)", st)

	var n int64
	require.NoError(t, db.gorm.Raw("SELECT COUNT(*) FROM sessions").Scan(&n).Error)
	require.EqualValues(t, commits, n)
	var check string
	require.NoError(t, db.gorm.Raw("PRAGMA integrity_check").Scan(&check).Error)
	require.Equal(t, "ok", check)
}

// TestCheckpointWaitsForABackgroundPass: SQLite runs one checkpoint at a time and answers a
// second with SQLITE_BUSY at once; an explicit Checkpoint during a background pass waits for it.
func TestCheckpointWaitsForABackgroundPass(t *testing.T) {
	cfg := sqliteConfig(t)
	cfg.checkpoints = &checkpointPolicy{interval: 0, settle: 0, restartFrames: 100}
	db := openTest(t, cfg)
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() { writeSessions(t, db, "w", 600) })
	for range 30 {
		require.NoError(t, db.Checkpoint(ctx))
	}
	wg.Wait()
	require.NoError(t, db.Checkpoint(ctx))
	wal, err := os.Stat(cfg.DSN + "-wal")
	require.NoError(t, err)
	require.Zero(t, wal.Size())
	require.Positive(t, db.ckpt.snapshot().Runs)
}
