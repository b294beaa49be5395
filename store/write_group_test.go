package store

import (
	"context"
	"errors"
	"fmt"
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
	db := openTest(t, sqliteConfig(t))
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
	db := openTest(t, sqliteConfig(t))
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
	db := openTest(t, sqliteConfig(t))
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
	db := openTest(t, sqliteConfig(t))
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
	db := openTest(t, sqliteConfig(t))
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
