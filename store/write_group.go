package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// SQLite has one writer at a time, so the writes of a busy server queue behind one another on
// writeMu, and each pays for a transaction of its own: BEGIN, the COMMIT that appends every page
// it changed to the write-ahead log, and the pages every write changes (the event log's tail,
// the counters, the first page of the file) once per transaction. Under load about nine tenths
// of the time went to holding writeMu, so the queue was the server's limit.
//
// A write group commits the writes that queued while the previous transaction ran in one
// transaction: whoever holds the lead takes writeMu, takes every queued write (up to
// maxWriteGroup), runs each under a savepoint of its own and commits once. Each write is still
// all or nothing: one that fails or panics is rolled back to its savepoint and gets its own
// error, and the others commit. The group commits in the order the writes queued, so the result
// is the one they would have had one after another, and a write's caller returns only once the
// group is durable. A write that finds nothing queued runs alone, exactly as before, so an idle
// server pays nothing for this.
//
// Whenever the group's transaction itself breaks (a savepoint that cannot be released or rolled
// back, a failed COMMIT, an error after which SQLite rolled the whole transaction back), nothing
// of it was committed, and every write of the group is run again alone, in order, as Update's
// contract allows (fn may run more than once).

// maxWriteGroup bounds the writes one group transaction takes, and so how long the last of them
// waits for the first.
const maxWriteGroup = 32

// writeGroup is the queue of a SQLite store's writes and the lead over it.
type writeGroup struct {
	mu      sync.Mutex
	queue   []*queuedWrite
	leading bool // some write holds the lead (it is running a group or about to)

	// Counters (WriteGroupStats).
	transactions atomic.Int64 // write transactions committed or rolled back
	grouped      atomic.Int64 // writes that ran in a transaction with others
	groups       atomic.Int64 // transactions that ran more than one write
	reruns       atomic.Int64 // groups whose transaction broke, so each write ran again alone
}

// queuedWrite is one Update waiting for, or run by, a group.
type queuedWrite struct {
	ctx      context.Context
	fn       func(gtx *gorm.DB) error
	lead     chan struct{} // closed when this write is to lead the next group
	done     chan struct{} // closed once err and panicked are final
	final    bool          // err and panicked are its result (under writeMu, by the leader)
	err      error
	panicked any
	stack    []byte // where it panicked
}

// errLeaderExited is the result of the writes of a group whose leader's goroutine ended while it
// ran them: a write called runtime.Goexit (t.FailNow in a test does). Nothing of those writes
// was committed.
var errLeaderExited = errors.New("store: a write ended its goroutine (runtime.Goexit) inside a write group; the group's writes were not committed")

// WriteGroupStats counts the SQLite store's write transactions (DB.WriteGroupStats).
type WriteGroupStats struct {
	Transactions int64 // write transactions run
	Groups       int64 // of them, transactions that ran several writes
	Grouped      int64 // writes that ran in those
	Reruns       int64 // groups whose transaction broke, so that each write ran again alone
}

// WriteGroupStats returns the write-group counters; zero on PostgreSQL.
func (db *DB) WriteGroupStats() WriteGroupStats {
	g := &db.group
	return WriteGroupStats{Transactions: g.transactions.Load(), Groups: g.groups.Load(),
		Grouped: g.grouped.Load(), Reruns: g.reruns.Load()}
}

// groupWrite runs fn in a write group and returns its result. A panic in fn is re-raised here,
// on the caller's goroutine, once the group is done.
func (db *DB) groupWrite(ctx context.Context, fn func(gtx *gorm.DB) error) error {
	w := &queuedWrite{ctx: ctx, fn: fn, lead: make(chan struct{}), done: make(chan struct{})}
	g := &db.group
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		select {
		case <-w.lead:
			lead = true
		case <-w.done:
		}
	}
	if lead {
		db.leadGroup()
	}
	<-w.done
	if w.panicked != nil {
		db.log.Error("store: a write panicked in its transaction; it was rolled back", "panic", w.panicked, "stack", string(w.stack))
		panic(w.panicked)
	}
	return w.err
}

// leadGroup runs the writes queued by the time writeMu is free as one group, hands the lead to
// the first write queued after them, and then lets the group's callers return. The hand-off is
// deferred: it happens even when a write ends the leader's goroutine (runtime.Goexit), or no
// write would ever run again.
func (db *DB) leadGroup() {
	g := &db.group
	db.writeMu.Lock()
	g.mu.Lock()
	n := min(len(g.queue), maxWriteGroup)
	batch := g.queue[:n:n]
	g.queue = append([]*queuedWrite(nil), g.queue[n:]...)
	g.mu.Unlock()
	defer func() {
		for _, w := range batch {
			if !w.final { // the goroutine is ending inside runGroup
				w.err, w.panicked = errLeaderExited, nil
			}
		}
		db.writeMu.Unlock()
		g.mu.Lock()
		if len(g.queue) > 0 {
			close(g.queue[0].lead)
		} else {
			g.leading = false
		}
		g.mu.Unlock()
		for _, w := range batch {
			close(w.done)
		}
	}()
	db.runGroup(batch)
}

// runGroup runs batch's writes, under writeMu: alone when only one is left to run, else in one
// transaction.
func (db *DB) runGroup(batch []*queuedWrite) {
	live := batch[:0:0]
	for _, w := range batch {
		if err := w.ctx.Err(); err != nil {
			w.err, w.final = err, true // it never began, as a transaction on a cancelled context never does
			continue
		}
		live = append(live, w)
	}
	if len(live) == 1 {
		db.runAlone(live[0])
		return
	}
	if len(live) == 0 {
		return
	}
	if err := db.runTogether(live); err != nil {
		db.group.reruns.Add(1)
		db.log.Warn("store: a grouped write transaction broke; running its writes one by one", "writes", len(live), "err", err)
		for _, w := range live {
			w.err, w.panicked, w.final = nil, nil, false
			db.runAlone(w)
		}
	}
}

// runAlone runs w in a transaction of its own, as every write ran before groups.
func (db *DB) runAlone(w *queuedWrite) {
	db.group.transactions.Add(1)
	w.err, w.panicked, w.stack = protect(func() error { return db.gorm.WithContext(w.ctx).Transaction(w.fn) })
	w.final = true
	if w.err == nil && w.panicked == nil {
		db.ckpt.committed()
	}
}

// groupSavepoint is the savepoint each write of a group runs under; one at a time, so one name.
const groupSavepoint = "forkgraph_group_write"

// runTogether runs writes in one transaction, each under a savepoint, and commits. It returns
// an error, having rolled everything back, when the transaction itself broke; the writes'
// results are then meaningless. Otherwise each write's result is final.
//
// The writes' statements run on contexts that cannot be cancelled (their values kept), whatever
// context each statement is given (groupConn): on SQLite a cancelled statement interrupts the
// connection, and an interrupted write inside a transaction rolls back the whole transaction, the
// other writes' work with it. A write whose context ended before its turn does not run.
func (db *DB) runTogether(writes []*queuedWrite) (broke error) {
	g := &db.group
	g.transactions.Add(1)
	tx := db.gorm.WithContext(context.Background()).Begin()
	if tx.Error != nil {
		return fmt.Errorf("begin: %w", tx.Error)
	}
	sqlTx, ok := tx.Statement.ConnPool.(*sql.Tx)
	if !ok {
		tx.Rollback()
		return errors.New("begin: gorm did not start a database/sql transaction")
	}
	committed := false
	defer func() {
		if !committed { // broken, or a write ended the goroutine
			_ = sqlTx.Rollback() // ErrTxDone when SQLite already rolled it back
		}
	}()
	tx.Statement.ConnPool = groupConn{sqlTx}
	// Savepoint statements go to the transaction directly: they are not the writes' statements
	// (Statements counts those), as BEGIN and COMMIT are not.
	exec := func(stmt string) error {
		_, err := sqlTx.ExecContext(context.Background(), stmt)
		return err
	}
	ran := 0
	for _, w := range writes {
		if err := w.ctx.Err(); err != nil {
			w.err = err
			continue
		}
		if err := exec("SAVEPOINT " + groupSavepoint); err != nil {
			return fmt.Errorf("savepoint: %w", err)
		}
		w.err, w.panicked, w.stack = protect(func() error { return w.fn(tx.WithContext(w.ctx)) })
		if w.err != nil || w.panicked != nil {
			if err := exec("ROLLBACK TO " + groupSavepoint); err != nil {
				return fmt.Errorf("roll back a write that failed (%v): %w", w.err, err)
			}
		}
		if err := exec("RELEASE " + groupSavepoint); err != nil {
			return fmt.Errorf("release savepoint: %w", err)
		}
		ran++
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	for _, w := range writes {
		w.final = true
	}
	db.ckpt.committed()
	if ran > 1 {
		g.groups.Add(1)
		g.grouped.Add(int64(ran))
	}
	return nil
}

// protect runs fn and returns its error, or what it panicked with and where.
func protect(fn func() error) (err error, panicked any, stack []byte) {
	defer func() {
		if p := recover(); p != nil {
			err, panicked, stack = nil, p, debug.Stack()
		}
	}()
	return fn(), nil, nil
}

// groupConn is a group's transaction as its writes' statements reach it: each statement runs
// with its context's values but not its cancellation (see runTogether). It is not a
// gorm.TxCommitter, so no write can commit or roll back the group.
type groupConn struct{ tx *sql.Tx }

func (c groupConn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return c.tx.PrepareContext(context.WithoutCancel(ctx), query)
}

func (c groupConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.tx.ExecContext(context.WithoutCancel(ctx), query, args...)
}

func (c groupConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return c.tx.QueryContext(context.WithoutCancel(ctx), query, args...)
}

func (c groupConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return c.tx.QueryRowContext(context.WithoutCancel(ctx), query, args...)
}
