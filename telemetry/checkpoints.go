package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SQLiteCheckpoints is what the SQLite store's background checkpointer has done so far (a
// reading of store.DB.CheckpointStats, kept here so telemetry does not import the store).
type SQLiteCheckpoints struct {
	Runs, Restarts, Failures int64
	Busy, WriteLockHeld      time.Duration
	LogFrames                int // frames in the write-ahead log at the last pass
}

var checkpointNames = []string{"forkgraph_store_sqlite_checkpoints_total", "forkgraph_store_sqlite_checkpoint_seconds_total",
	"forkgraph_store_sqlite_checkpoint_write_wait_seconds_total", "forkgraph_store_sqlite_log_restarts_total",
	"forkgraph_store_sqlite_checkpoint_failures_total", "forkgraph_store_sqlite_log_frames"}

// WatchSQLiteCheckpoints registers the forkgraph_store_sqlite_* metrics, read from stats at every
// scrape: how often the checkpointer copied the write-ahead log into the database file, the time
// it took (beside the writers) and the part of it writers waited for, how often the log started
// over, and its length at the last pass. Only a SQLite store opened for writing has them.
func (m *Metrics) WatchSQLiteCheckpoints(stats func() SQLiteCheckpoints) {
	counter := readCounter(m, stats)
	counter(checkpointNames[0], "Checkpoints the SQLite checkpointer ran (each copies the write-ahead log's new frames into the database file).",
		func(s SQLiteCheckpoints) float64 { return float64(s.Runs) })
	counter(checkpointNames[1], "Time the SQLite checkpointer spent checkpointing, beside the writers.",
		func(s SQLiteCheckpoints) float64 { return s.Busy.Seconds() })
	counter(checkpointNames[2], "Time writers waited for the SQLite checkpointer: the last copy before the write-ahead log starts over.",
		func(s SQLiteCheckpoints) float64 { return s.WriteLockHeld.Seconds() })
	counter(checkpointNames[3], "Times the SQLite write-ahead log was fully copied so the next writer started it over.",
		func(s SQLiteCheckpoints) float64 { return float64(s.Restarts) })
	counter(checkpointNames[4], "SQLite checkpoints that failed (logged; the next pass tries again).",
		func(s SQLiteCheckpoints) float64 { return float64(s.Failures) })
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: checkpointNames[5],
		Help: "Frames (pages) in the SQLite write-ahead log at the checkpointer's last pass."},
		func() float64 { return float64(stats().LogFrames) }))
	m.names = append(m.names, checkpointNames...)
}

// SQLiteWrites counts the SQLite store's write transactions (a reading of
// store.DB.WriteGroupStats): writes that queue behind one another commit together.
type SQLiteWrites struct {
	Transactions, Groups, Grouped, Reruns int64
}

var writeGroupNames = []string{"forkgraph_store_sqlite_write_transactions_total", "forkgraph_store_sqlite_write_groups_total",
	"forkgraph_store_sqlite_grouped_writes_total", "forkgraph_store_sqlite_write_group_reruns_total"}

// WatchSQLiteWrites registers the forkgraph_store_sqlite_write* metrics, read from stats at every
// scrape: the write transactions the SQLite store ran, how many of them committed several
// queued writes and how many writes those held, and groups whose transaction broke so that each
// of their writes ran again alone.
func (m *Metrics) WatchSQLiteWrites(stats func() SQLiteWrites) {
	counter := readCounter(m, stats)
	counter(writeGroupNames[0], "Write transactions the SQLite store ran (one per write, or one per group of queued writes).",
		func(s SQLiteWrites) float64 { return float64(s.Transactions) })
	counter(writeGroupNames[1], "SQLite write transactions that committed several writes queued behind one another.",
		func(s SQLiteWrites) float64 { return float64(s.Groups) })
	counter(writeGroupNames[2], "Writes that ran in those grouped SQLite transactions.",
		func(s SQLiteWrites) float64 { return float64(s.Grouped) })
	counter(writeGroupNames[3], "Grouped SQLite transactions that broke, so that each of their writes ran again alone (logged).",
		func(s SQLiteWrites) float64 { return float64(s.Reruns) })
	m.names = append(m.names, writeGroupNames...)
}

// readCounter returns a function that registers a counter whose value is read from stats at
// every scrape.
func readCounter[S any](m *Metrics, stats func() S) func(name, help string, value func(S) float64) {
	return func(name, help string, value func(S) float64) {
		m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return value(stats()) }))
	}
}
