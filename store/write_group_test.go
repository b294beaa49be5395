package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// queuedResult is what one write of queueWrites returned, or panicked with.
type queuedResult struct {
	err      error
	panicked any
}

// queueWrites starts writes while holding writeMu, each once the one before it is queued (so
// they queue in order), then lets them go: the first to lead finds all of them queued and runs
// them as one group. It returns each write's result once all have returned.
func queueWrites(t *testing.T, db *DB, writes ...func() error) []queuedResult {
	t.Helper()
	results := make([]queuedResult, len(writes))
	var wg sync.WaitGroup
	db.writeMu.Lock()
	for i, write := range writes {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					results[i].panicked = p
				}
			}()
			results[i].err = write()
		})
		require.Eventually(t, func() bool {
			db.group.mu.Lock()
			defer db.group.mu.Unlock()
			return len(db.group.queue) == i+1
		}, 10*time.Second, 100*time.Microsecond, "write %d queued", i)
	}
	db.writeMu.Unlock()
	wg.Wait()
	return results
}

// upsertSessions returns an Update that upserts sessions with these ids and then returns err or,
// with panicWith set, panics.
func upsertSessions(db *DB, err error, panicWith any, ids ...string) func() error {
	ctx := context.Background()
	return func() error {
		return db.Update(ctx, func(tx forkengine.Tx) error {
			for _, id := range ids {
				if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Title: id}); err != nil {
					return err
				}
			}
			if panicWith != nil {
				panic(panicWith)
			}
			return err
		})
	}
}

// requireSessions fails unless exactly the sessions in want (true) exist among ids.
func requireSessions(t *testing.T, db *DB, want map[string]bool) {
	t.Helper()
	var ids []string
	for id := range want {
		ids = append(ids, id)
	}
	found, err := db.SessionsByIDs(context.Background(), "ws", ids)
	require.NoError(t, err)
	for id, exists := range want {
		_, ok := found[id]
		require.Equal(t, exists, ok, "session %s exists", id)
	}
}

// TestWriteGroupCommitsQueuedWritesTogether: writes that queued behind a running one commit in one
// transaction, each all or nothing: the one that failed and the one that panicked leave nothing,
// get their own error and panic back, and do not take the others down with them.
func TestWriteGroupCommitsQueuedWritesTogether(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	before := db.WriteGroupStats()
	refused := errors.New("refused by the write itself")
	results := queueWrites(t, db,
		upsertSessions(db, nil, nil, "a1", "a2"),
		upsertSessions(db, nil, nil, "b"),
		upsertSessions(db, refused, nil, "c1", "c2"),
		upsertSessions(db, nil, "write d panicked", "d"),
		upsertSessions(db, nil, nil, "e"),
	)
	require.NoError(t, results[0].err)
	require.NoError(t, results[1].err)
	require.ErrorIs(t, results[2].err, refused)
	require.Nil(t, results[2].panicked)
	require.Equal(t, "write d panicked", results[3].panicked, "the panic reaches the write's own goroutine")
	require.NoError(t, results[4].err)
	requireSessions(t, db, map[string]bool{"a1": true, "a2": true, "b": true, "c1": false, "c2": false, "d": false, "e": true})

	after := db.WriteGroupStats()
	require.Equal(t, int64(1), after.Transactions-before.Transactions, "five writes, one transaction")
	require.Equal(t, int64(1), after.Groups-before.Groups)
	require.Equal(t, int64(5), after.Grouped-before.Grouped)
	require.Zero(t, after.Reruns-before.Reruns)

	// With nothing queued, a write runs alone.
	require.NoError(t, upsertSessions(db, nil, nil, "f")())
	alone := db.WriteGroupStats()
	require.Equal(t, int64(1), alone.Transactions-after.Transactions)
	require.Equal(t, after.Groups, alone.Groups)
}

// TestWriteGroupRunsWritesInQueueOrder: a later write of a group sees what an earlier one wrote,
// as it would had the first committed before it began.
func TestWriteGroupRunsWritesInQueueOrder(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	var seen string
	results := queueWrites(t, db,
		upsertSessions(db, nil, nil, "first"),
		func() error {
			return db.Update(ctx, func(tx forkengine.Tx) error {
				s, err := tx.GetSession(ctx, "ws", "first")
				if err != nil {
					return err
				}
				seen = s.Title
				return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: "second", Title: "after " + s.Title})
			})
		},
	)
	require.NoError(t, results[0].err)
	require.NoError(t, results[1].err)
	require.Equal(t, "first", seen)
	s, err := db.GetSession(ctx, "ws", "second")
	require.NoError(t, err)
	require.Equal(t, "after first", s.Title)
	require.Equal(t, int64(1), db.WriteGroupStats().Groups)
}

// TestWriteGroupRerunsItsWritesAloneWhenItsTransactionBreaks: a write that ends the group's
// transaction (here by rolling it back behind the group's back) rolls everyone's work back; each
// write then runs again in a transaction of its own, so the others still commit, once.
func TestWriteGroupRerunsItsWritesAloneWhenItsTransactionBreaks(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	var mu sync.Mutex
	runs := map[string]int{}
	session := func(id string) func(gtx *gorm.DB) error {
		return func(gtx *gorm.DB) error {
			tx := &txn{queries: queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, pending: new([]cachedSnapshot), statements: db.statements}}
			return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Title: id})
		}
	}
	write := func(name string, fn func(gtx *gorm.DB) error) func() error {
		return func() error {
			return db.transaction(ctx, func(gtx *gorm.DB) error {
				mu.Lock()
				runs[name]++
				mu.Unlock()
				return fn(gtx)
			})
		}
	}
	before := db.WriteGroupStats()
	results := queueWrites(t, db,
		write("one", session("one")),
		write("breaker", func(gtx *gorm.DB) error {
			if err := session("broken")(gtx); err != nil {
				return err
			}
			return gtx.Exec("ROLLBACK").Error
		}),
		write("three", session("three")),
	)
	require.NoError(t, results[0].err)
	require.Error(t, results[1].err, "alone, the breaking write cannot commit what it rolled back")
	require.NoError(t, results[2].err)
	requireSessions(t, db, map[string]bool{"one": true, "three": true})
	require.Equal(t, map[string]int{"one": 2, "breaker": 2, "three": 1}, runs,
		"the writes up to the break ran in the group and again alone; the rest only alone")
	after := db.WriteGroupStats()
	require.Equal(t, int64(1), after.Reruns-before.Reruns)
	require.Zero(t, after.Groups-before.Groups, "the broken group committed nothing")
}

// TestWriteGroupSkipsAWriteWhoseContextEnded: a write cancelled while it waited for writeMu never
// runs and gets its context's error; the rest of its group commits.
func TestWriteGroupSkipsAWriteWhoseContextEnded(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel() // as if cancelled while it waited: the group checks when the write's turn comes
	ran := false
	results := queueWrites(t, db,
		upsertSessions(db, nil, nil, "kept"),
		func() error {
			return db.Update(cancelled, func(tx forkengine.Tx) error {
				ran = true
				return tx.UpsertSession(cancelled, forkengine.Session{WorkspaceID: "ws", ID: "cancelled"})
			})
		},
		upsertSessions(db, nil, nil, "also kept"),
	)
	require.NoError(t, results[0].err)
	require.ErrorIs(t, results[1].err, context.Canceled)
	require.False(t, ran, "a cancelled write does not run")
	require.NoError(t, results[2].err)
	requireSessions(t, db, map[string]bool{"kept": true, "also kept": true, "cancelled": false})
	require.Equal(t, int64(1), db.WriteGroupStats().Groups)
}

// TestWriteGroupUnderConcurrentWriters: many goroutines writing at once all commit exactly their
// own rows, whatever groups they fell into.
func TestWriteGroupUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	const writers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				var fail error
				if i%5 == 4 {
					fail = errors.New("no")
				}
				if err := upsertSessions(db, fail, nil, id)(); !errors.Is(err, fail) {
					errs <- fmt.Errorf("%s: %v", id, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	want := map[string]bool{}
	for w := range writers {
		for i := range each {
			want[fmt.Sprintf("w%d-%d", w, i)] = i%5 != 4
		}
	}
	requireSessions(t, db, want)
	stats := db.WriteGroupStats()
	require.Zero(t, stats.Reruns)
	t.Logf("%d writes in %d transactions (%d groups of %d writes)", writers*each, stats.Transactions, stats.Groups, stats.Grouped)
}

// slowUpsert is a session upsert whose SELECT takes a noticeable time (a long recursive count).
const slowUpsert = `INSERT INTO sessions (workspace_id, id, kind, provider, provider_session_id, title,
	rail_section_key, cwd, model, settings, visible, created_at_us, updated_at_us)
	WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000000)
	SELECT 'ws', 'slow', 'root', '', '', 'slow', '', '', '', '{}', 1, 0, 0 FROM c WHERE i = 3000000`

// TestWriteGroupDoesNotInterruptAWriteWhoseContextEndsMidStatement: a grouped write's context
// ends while its statement runs, given to the statement as every Tx method gives it. SQLite
// would interrupt the statement and roll back the whole group's transaction; the group runs
// its statements without their cancellation, so the write finishes and all three commit in one
// transaction, none run twice.
func TestWriteGroupDoesNotInterruptAWriteWhoseContextEndsMidStatement(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	runs := map[string]int{}
	counted := func(name string, fn func(gtx *gorm.DB) error) func(gtx *gorm.DB) error {
		return func(gtx *gorm.DB) error {
			mu.Lock()
			runs[name]++
			mu.Unlock()
			return fn(gtx)
		}
	}
	session := func(id string) func(gtx *gorm.DB) error {
		return func(gtx *gorm.DB) error {
			tx := &txn{queries: queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, pending: new([]cachedSnapshot), statements: db.statements}}
			return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Title: id})
		}
	}
	before := db.WriteGroupStats()
	var took time.Duration
	results := queueWrites(t, db,
		func() error { return db.transaction(ctx, counted("first", session("first"))) },
		func() error {
			return db.transaction(cancelled, counted("slow", func(gtx *gorm.DB) error {
				tx := &txn{queries: queries{db: gtx, dialect: db.dialect}}
				timer := time.AfterFunc(20*time.Millisecond, cancel)
				defer timer.Stop()
				began := time.Now()
				err := tx.with(cancelled).Exec(slowUpsert).Error // the context as a Tx method passes it
				took = time.Since(began)
				return err
			}))
		},
		func() error { return db.transaction(ctx, counted("last", session("last"))) },
	)
	for i, r := range results {
		require.NoError(t, r.err, "write %d", i)
	}
	require.Greater(t, took, 20*time.Millisecond, "the context ended while the statement ran")
	require.Error(t, cancelled.Err())
	requireSessions(t, db, map[string]bool{"first": true, "slow": true, "last": true})
	require.Equal(t, map[string]int{"first": 1, "slow": 1, "last": 1}, runs)
	after := db.WriteGroupStats()
	require.Zero(t, after.Reruns-before.Reruns, "the group did not break")
	require.Equal(t, int64(1), after.Groups-before.Groups)
}

// TestWriteGroupSurvivesAWriteThatEndsItsGoroutine: a write that calls runtime.Goexit (as
// t.FailNow does) ends the goroutine leading its group. Nothing of that group is committed, its
// other writes get errLeaderExited, and the store still takes writes: the lead and writeMu are
// handed on, not lost with the goroutine.
func TestWriteGroupSurvivesAWriteThatEndsItsGoroutine(t *testing.T) {
	t.Parallel()
	db := openTest(t, migratedSQLite(t))
	ctx := context.Background()
	exited := func() error {
		return db.Update(ctx, func(tx forkengine.Tx) error {
			if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: "exits"}); err != nil {
				return err
			}
			runtime.Goexit()
			return nil
		})
	}
	// Alone: the write's own goroutine ends, as it would have without groups.
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = exited()
	}()
	<-done
	require.NoError(t, upsertSessions(db, nil, nil, "after alone")())

	// In a group led by another write's goroutine.
	results := queueWrites(t, db,
		upsertSessions(db, nil, nil, "leader"),
		exited,
		upsertSessions(db, nil, nil, "follower"),
	)
	require.ErrorIs(t, results[1].err, errLeaderExited)
	require.ErrorIs(t, results[2].err, errLeaderExited)
	requireSessions(t, db, map[string]bool{"exits": false, "leader": false, "follower": false, "after alone": true})
	require.NoError(t, upsertSessions(db, nil, nil, "after group")())
	requireSessions(t, db, map[string]bool{"after group": true})
}
