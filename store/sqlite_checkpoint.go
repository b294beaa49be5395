package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// The write-ahead log of a SQLite file is copied back into the database file by a checkpoint.
// SQLite's own, the "autocheckpoint", runs inside the COMMIT that takes the log past a size: that
// commit, and every writer queued behind it on writeMu, waited for the whole copy and its two
// fsyncs (tens of milliseconds, then over a hundred, every few seconds under a fork load: most of
// the p99 of a fork cycle). The checkpointer does the same copy on its own connection while
// writers go on: a PASSIVE checkpoint copies the frames committed when it starts and takes no lock
// a writer needs. SQLite's autocheckpoint stays on as a backstop, at a size the checkpointer keeps
// the log well below.

// checkpointPolicy says when the checkpointer runs.
type checkpointPolicy struct {
	// interval is the least time between two checkpoints under a steady write load; a burst of
	// commits is copied in one pass, so a page many of them rewrote (the tail of an index) is
	// copied once.
	interval time.Duration
	// settle is how long after a commit the checkpointer waits for more before it copies a
	// trickle of writes (bounded by interval since the last pass).
	settle time.Duration
	// restartFrames: once the log holds this many frames, the pass makes the next writer start
	// it over from its first frame (restart). Without that, under a steady load the log file
	// would grow without bound.
	restartFrames int
}

// defaultCheckpointPolicy: at the fork benchmark's rate (about 25,000 frames a second) a pass
// copies a few thousand frames, as SQLite's autocheckpoint did at 8000 before the checkpointer,
// and the log starts over about once a second, each time holding writers for one short pass
// (its two fsyncs: milliseconds, but up to tens of them on a busy disk). The log file then grows
// to about restartFrames plus a second's frames, ~70-100 MB, at that load.
var defaultCheckpointPolicy = checkpointPolicy{interval: 250 * time.Millisecond, settle: 50 * time.Millisecond, restartFrames: 16000}

// CheckpointStats are the SQLite checkpointer's counters (DB.CheckpointStats), for metrics.
type CheckpointStats struct {
	Runs     int64         // checkpoints run
	Restarts int64         // times the log was left fully copied so the next writer started it over
	Busy     time.Duration // time spent checkpointing
	// WriteLockHeld is the time the checkpointer held writeMu (writers waited): the last step
	// of each restart.
	WriteLockHeld, MaxWriteLockHeld time.Duration
	LastFrames                      int   // frames in the log at the last pass
	MaxFrames                       int   // the most frames any pass found in the log
	Failures                        int64 // passes that failed (logged)
}

type checkpointer struct {
	// conn is the checkpointer's own connection, held for its life: a pass never waits for the
	// pool (least of all with writeMu held), and its statements are not counted as the store's.
	conn    *sql.Conn
	writeMu *sync.Mutex
	log     *slog.Logger
	policy  checkpointPolicy

	commits atomic.Int64  // commits since the last pass started
	wake    chan struct{} // a commit happened (capacity 1)
	stop    chan struct{}
	done    chan struct{}
	closing sync.Once

	// passMu is held for a pass: SQLite runs one checkpoint at a time and refuses a second
	// (SQLITE_BUSY), so DB.Checkpoint takes it too and waits for a pass in progress.
	passMu sync.Mutex
	mu     sync.Mutex
	stats  CheckpointStats
}

func startCheckpointer(ctx context.Context, pool *sql.DB, writeMu *sync.Mutex, log *slog.Logger, policy checkpointPolicy) (*checkpointer, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open the sqlite checkpointer's connection: %w", err)
	}
	c := &checkpointer{conn: conn, writeMu: writeMu, log: log, policy: policy,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// committed tells the checkpointer a write transaction committed. It never blocks.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	c.commits.Add(1)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// close stops the checkpointer and waits for a pass in progress; nil-safe and idempotent.
func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.closing.Do(func() {
		close(c.stop)
		<-c.done
		_ = c.conn.Close()
		st := c.snapshot()
		c.log.Info("store: sqlite checkpointer stopped", "runs", st.Runs, "restarts", st.Restarts, "busy", st.Busy,
			"write_lock_held", st.WriteLockHeld, "max_write_lock_held", st.MaxWriteLockHeld, "max_frames", st.MaxFrames,
			"failures", st.Failures)
	})
}

func (c *checkpointer) run() {
	defer close(c.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	last := time.Time{}
	for {
		select {
		case <-c.stop:
			timer.Stop()
			return
		case <-c.wake:
			if armed {
				continue
			}
			// Copy after settle, but no sooner than interval after the last pass began.
			wait := max(c.policy.settle, c.policy.interval-time.Since(last))
			timer.Reset(wait)
			armed = true
			continue
		case <-timer.C:
			armed = false
		}
		if c.commits.Swap(0) == 0 {
			continue
		}
		last = time.Now()
		c.pass()
	}
}

// pass runs one PASSIVE checkpoint beside the writers and, when the log has grown to
// restartFrames, gets it started over (restart).
func (c *checkpointer) pass() {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	start := time.Now()
	frames, _, err := c.checkpoint("PASSIVE")
	var held time.Duration
	restarted := false
	if err == nil && frames >= c.policy.restartFrames {
		restarted, _, held, err = c.restart()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.Runs++
	c.stats.Busy += time.Since(start)
	c.stats.WriteLockHeld += held
	c.stats.MaxWriteLockHeld = max(c.stats.MaxWriteLockHeld, held)
	c.stats.LastFrames = frames
	c.stats.MaxFrames = max(c.stats.MaxFrames, frames)
	if restarted {
		c.stats.Restarts++
	}
	if err != nil {
		c.stats.Failures++
		c.log.Warn("store: sqlite checkpoint failed", "err", err)
	}
}

// restartAttempts bounds how often restart looks for a moment with every frame copied before it
// copies the rest under writeMu; lockedCopyFrames is what it will copy there before that.
const (
	restartAttempts  = 8
	lockedCopyFrames = 256
)

// restart makes the next writer start the log over. SQLite does that only for a writer that
// begins with every frame copied, and a checkpoint beside the writers always trails the newest
// commit, so under a steady load it never happens by itself. restart catches up beside the
// writers, then takes writeMu when it is free and asks (a NOOP checkpoint, no I/O) whether every
// frame is copied: if so, the next writer restarts the log and no writer waited at all. If a few
// frames are left it copies them holding writeMu (writers wait for that copy and its fsyncs);
// if many, it lets go and catches up again. The last attempt copies whatever is left.
// full is the log's length when it was left fully copied; held, the time writers waited.
func (c *checkpointer) restart() (restarted bool, full int, held time.Duration, err error) {
	for attempt := 1; ; attempt++ {
		if _, _, err := c.checkpoint("PASSIVE"); err != nil {
			return false, 0, held, err
		}
		last := attempt == restartAttempts
		if last {
			c.writeMu.Lock()
		} else if !c.writeMu.TryLock() {
			continue
		}
		locked := time.Now()
		frames, copied, err := c.checkpoint("NOOP")
		if err == nil && frames > copied && (last || frames-copied <= lockedCopyFrames) {
			frames, copied, err = c.checkpoint("PASSIVE")
		}
		held += time.Since(locked)
		c.writeMu.Unlock()
		if err != nil {
			return false, 0, held, err
		}
		if frames >= 0 && copied >= frames { // -1, -1: SQLite could not read the counts
			return true, frames, held, nil
		}
		if last {
			// A reader's snapshot kept frames from being copied; the next pass tries again.
			return false, 0, held, nil
		}
	}
}

// checkpoint runs PRAGMA wal_checkpoint in mode (PASSIVE copies what it can without waiting;
// NOOP only reads the counts) and returns the frames in the log and how many of them are copied.
func (c *checkpointer) checkpoint(mode string) (frames, copied int, err error) {
	var busy int
	row := c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")")
	if err := row.Scan(&busy, &frames, &copied); err != nil {
		return 0, 0, fmt.Errorf("checkpoint sqlite (%s): %w", mode, err)
	}
	return frames, copied, nil
}

// exclusive runs fn with no background pass in progress or starting; nil-safe.
func (c *checkpointer) exclusive(fn func() error) error {
	if c == nil {
		return fn()
	}
	c.passMu.Lock()
	defer c.passMu.Unlock()
	return fn()
}

// CheckpointStats returns what the SQLite checkpointer has done so far, and false for a store
// that has none (PostgreSQL, an in-memory or read-only SQLite database).
func (db *DB) CheckpointStats() (CheckpointStats, bool) {
	return db.ckpt.snapshot(), db.ckpt != nil
}

func (c *checkpointer) snapshot() CheckpointStats {
	if c == nil {
		return CheckpointStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}
