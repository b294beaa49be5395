package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// boundedWait is how long these tests wait for anything the database should do at once: a
// missing SKIP LOCKED or lock order then fails in seconds instead of hanging the suite.
const boundedWait = 10 * time.Second

// backendPID is the PostgreSQL backend of tx's connection.
func backendPID(ctx context.Context, tx forkengine.Tx) (int64, error) {
	return tx.(*txn).queryInt(ctx, "SELECT pg_backend_pid()")
}

// advisoryLocks counts the advisory locks backend pid holds (granted) or waits for.
func advisoryLocks(t *testing.T, db *DB, pid int64, granted bool) int64 {
	t.Helper()
	n, err := db.queryInt(context.Background(),
		"SELECT count(*) FROM pg_locks WHERE pid = ? AND locktype = 'advisory' AND granted = ?", pid, granted)
	require.NoError(t, err)
	return n
}

// holdInTx runs fn in a transaction of db and keeps the transaction open until the returned
// release is called; it returns once fn has run. Cleanup releases it too.
func holdInTx(t *testing.T, db *DB, fn func(ctx context.Context, tx forkengine.Tx) error) (release func()) {
	t.Helper()
	held, done := make(chan error, 1), make(chan error, 1)
	free := make(chan struct{})
	go func() {
		done <- db.Update(context.Background(), func(tx forkengine.Tx) error {
			err := fn(context.Background(), tx)
			held <- err
			<-free
			return err
		})
	}()
	select {
	case err := <-held:
		require.NoError(t, err)
	case <-time.After(boundedWait):
		t.Fatal("the holding transaction did not start")
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(free)
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(release)
	return release
}

// Tx.Lock takes its keys in sorted order, whatever order they are named in, so two
// transactions that share keys queue on the first one instead of each holding a key the other
// waits for. Observed in pg_locks: named (b, a) while b is held elsewhere, the transaction holds a
// and waits for b.
func TestLocksAreTakenInSortedOrderPostgres(t *testing.T) {
	requirePostgres(t)
	db := openTest(t, postgresConfig(t))
	release := holdInTx(t, db, func(ctx context.Context, tx forkengine.Tx) error { return tx.Lock(ctx, "b") })

	pids, locked := make(chan int64, 1), make(chan error, 1)
	go func() {
		locked <- db.Update(context.Background(), func(tx forkengine.Tx) error {
			pid, err := backendPID(context.Background(), tx)
			if err != nil {
				return err
			}
			pids <- pid
			return tx.Lock(context.Background(), "b", "a")
		})
	}()
	var pid int64
	select {
	case pid = <-pids:
	case err := <-locked:
		t.Fatalf("the locking transaction ended before it locked: %v", err)
	case <-time.After(boundedWait):
		t.Fatal("the locking transaction did not start")
	}
	require.Eventually(t, func() bool { return advisoryLocks(t, db, pid, false) == 1 }, boundedWait, 5*time.Millisecond,
		"the transaction waits for b")
	require.Equal(t, int64(1), advisoryLocks(t, db, pid, true), "it took a, the first key in order, before waiting for b")
	release()
	select {
	case err := <-locked:
		require.NoError(t, err)
	case <-time.After(boundedWait):
		t.Fatal("the locking transaction did not finish once b was free")
	}
}

// The database aborts a transaction to break a deadlock, or a conflict it cannot serialise; Update
// runs it again and the write succeeds, counted in Retries. Both failures are provoked for real:
// two transactions taking two locks in opposite orders, and two REPEATABLE READ transactions
// updating the row both read. The aborted try's write is rolled back, the retried one's kept.
func TestAbortedTransactionsAreRetriedPostgres(t *testing.T) {
	requirePostgres(t)
	for _, tc := range []struct {
		name string
		// first runs before the two transactions meet, rest after; meets says whether this is the
		// try that meets the other (the first try of each), side which of the two it is.
		first, rest func(ctx context.Context, tx *txn, side int, meets bool) error
	}{
		{
			name: "Deadlock",
			first: func(ctx context.Context, tx *txn, side int, _ bool) error {
				return tx.Lock(ctx, fmt.Sprintf("key-%d", side))
			},
			rest: func(ctx context.Context, tx *txn, side int, _ bool) error {
				return tx.Lock(ctx, fmt.Sprintf("key-%d", 1-side))
			},
		},
		{
			name: "SerializationFailure",
			first: func(ctx context.Context, tx *txn, _ int, meets bool) error {
				if meets {
					if err := tx.with(ctx).Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").Error; err != nil {
						return err
					}
				}
				_, err := tx.queryInt(ctx, "SELECT value FROM counters WHERE scope = 'retry-test' AND name = 'shared'")
				return err
			},
			rest: func(ctx context.Context, tx *txn, _ int, _ bool) error {
				_, err := tx.reserve(ctx, "retry-test", "shared", 1)
				return err
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t, postgresConfig(t))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			require.NoError(t, db.Update(ctx, func(tx forkengine.Tx) error {
				_, err := tx.(*txn).reserve(ctx, "retry-test", "shared", 1) // the row both read
				return err
			}))
			var met sync.WaitGroup
			met.Add(2)
			var mu sync.Mutex
			tries := 0
			errs := make(chan error, 2)
			for side := range 2 {
				go func() {
					try := 0
					errs <- db.Update(ctx, func(ftx forkengine.Tx) error {
						tx := ftx.(*txn)
						try++
						mu.Lock()
						tries++
						mu.Unlock()
						if err := tc.first(ctx, tx, side, try == 1); err != nil {
							return err
						}
						if _, err := tx.reserve(ctx, "retry-test", fmt.Sprintf("writes-%d", side), 1); err != nil {
							return err
						}
						if try == 1 { // both hold what the other is about to ask for
							met.Done()
							met.Wait()
						}
						return tc.rest(ctx, tx, side, try == 1)
					})
				}()
			}
			for range 2 {
				select {
				case err := <-errs:
					require.NoError(t, err, "the aborted transaction was run again and succeeded")
				case <-ctx.Done():
					t.Fatal("the transactions did not finish")
				}
			}
			require.Equal(t, int64(1), db.Retries(), "one transaction was aborted and run again")
			require.Equal(t, 3, tries)
			for side := range 2 {
				n, err := db.queryInt(ctx, "SELECT value FROM counters WHERE scope = 'retry-test' AND name = ?", fmt.Sprintf("writes-%d", side))
				require.NoError(t, err)
				require.Equal(t, int64(1), n, "side %d wrote once: the aborted try's write was rolled back", side)
			}
		})
	}
}

// A claim passes over operations another transaction holds locked (FOR UPDATE SKIP LOCKED), at
// once; without it the claim would wait for that transaction (here, as long as the test holds it),
// or claim the row twice. Bounded: a missing SKIP LOCKED fails in seconds.
func TestClaimsPassOverLockedOperationsPostgres(t *testing.T) {
	requirePostgres(t)
	db := openTest(t, postgresConfig(t))
	ctx := context.Background()
	engine := scriptedEngine(t, db, "instance-a")
	psid := "provider-src"
	_, err := engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "w", ID: "src", Provider: "scripted", ProviderSessionID: &psid})
	require.NoError(t, err)
	var ops []forkengine.ForkOperation
	for i := 1; i <= 2; i++ {
		ptid := fmt.Sprintf("provider-t%d", i)
		_, err := engine.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "w", SessionID: "src", ID: fmt.Sprintf("t%d", i),
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid,
			ProviderTurnBinding: json.RawMessage(`{"v":1}`)})
		require.NoError(t, err)
		op, err := engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "src",
			ThroughTurnID: fmt.Sprintf("t%d", i), RequestID: fmt.Sprintf("request-%d", i)})
		require.NoError(t, err)
		ops = append(ops, op)
	}
	release := holdInTx(t, db, func(ctx context.Context, tx forkengine.Tx) error {
		_, err := tx.UpdateOperation(ctx, ops[0], ops[0].Status) // the row stays locked until release
		return err
	})

	later := time.Now().Add(time.Hour) // both leases expired
	claim := forkengine.LeaseClaim{Owner: "instance-b", Now: later, Until: later.Add(time.Minute), Limit: 10}
	bounded, cancel := context.WithTimeout(ctx, boundedWait)
	defer cancel()
	claimed, err := db.ClaimOperations(bounded, claim)
	require.NoError(t, err, "the claim waited for a row another transaction holds")
	require.Len(t, claimed, 1)
	require.Equal(t, ops[1].ID, claimed[0].ID, "the locked operation is passed over, the free one claimed")
	release()
	claimed, err = db.ClaimOperations(bounded, claim)
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	require.Equal(t, ops[0].ID, claimed[0].ID, "once free it is claimed")
	require.NoError(t, engine.Close(ctx))
}
