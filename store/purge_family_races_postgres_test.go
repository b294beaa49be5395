package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// pausingStore is a DB whose transactions, after their first call of the Tx method named
// pauseAfter, stay open until release is closed or another backend waits on one of their locks:
// a way to stop an engine mid-transaction where a race with another instance matters.
type pausingStore struct {
	*DB
	pauseAfter string
	paused     chan struct{} // closed when the transaction is at the pause
	release    chan struct{}
	once       *sync.Once
}

func newPausingStore(db *DB, pauseAfter string) pausingStore {
	return pausingStore{DB: db, pauseAfter: pauseAfter, paused: make(chan struct{}), release: make(chan struct{}), once: &sync.Once{}}
}

// Update runs fn on a Tx that pauses after pauseAfter.
func (s pausingStore) Update(ctx context.Context, fn func(tx forkengine.Tx) error) error {
	return s.DB.Update(ctx, func(tx forkengine.Tx) error { return fn(pausingTx{Tx: tx, store: s}) })
}

type pausingTx struct {
	forkengine.Tx
	store pausingStore
}

func (tx pausingTx) pause(ctx context.Context, method string) error {
	if method != tx.store.pauseAfter {
		return nil
	}
	var err error
	tx.store.once.Do(func() {
		var pid int64
		if err = tx.Tx.(*txn).with(ctx).Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
			return
		}
		close(tx.store.paused)
		err = awaitDoneOrBlockedBy(ctx, tx.store.DB, pid, tx.store.release)
	})
	return err
}

func (tx pausingTx) InsertOperation(ctx context.Context, op forkengine.ForkOperation) error {
	if err := tx.Tx.InsertOperation(ctx, op); err != nil {
		return err
	}
	return tx.pause(ctx, "InsertOperation")
}

func (tx pausingTx) PurgeSession(ctx context.Context, ws, id string) error {
	if err := tx.Tx.PurgeSession(ctx, ws, id); err != nil {
		return err
	}
	return tx.pause(ctx, "PurgeSession")
}

// Family R -> M -> C. One instance starts a fork of C (its prepare holds R's family lock) while
// the other purges M, which makes C a root. Whichever transaction reaches the database first,
// once both commit the new operation counts in C's family and in no other.
func TestPurgeOfMiddleBesideForkOfGrandchildKeepsFamilyCountsPostgres(t *testing.T) {
	for _, purgeFirst := range []bool{false, true} {
		name := "fork first"
		if purgeFirst {
			name = "purge first"
		}
		t.Run(name, func(t *testing.T) {
			in := newTwoInstances(t)
			ctx := context.Background()
			in.seedSource(t, "R", 1)
			forkAndAcknowledge(t, in, "R", "R-t1", "M")
			mTurns, err := in.dbs[0].TurnsThrough(ctx, "w", "M", 1<<40)
			require.NoError(t, err)
			forkAndAcknowledge(t, in, "M", mTurns[0].ID, "C")
			cTurns, err := in.dbs[0].TurnsThrough(ctx, "w", "C", 1<<40)
			require.NoError(t, err)
			requireCountsMatchRows(t, in.dbs[0], "w", "seeded")

			forker, purger := in.dbs[0], in.dbs[1]
			first := newPausingStore(forker, "InsertOperation")
			if purgeFirst {
				first = newPausingStore(purger, "PurgeSession")
			}
			engine := func(db forkengine.Store, id string) *forkengine.Engine {
				e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": in.driver},
					InstanceID: id, Logger: quietLog})
				require.NoError(t, err)
				return e
			}
			var forkEngine, purgeEngine *forkengine.Engine
			if purgeFirst {
				forkEngine, purgeEngine = engine(forker, "forker"), engine(first, "purger")
			} else {
				forkEngine, purgeEngine = engine(first, "forker"), engine(purger, "purger")
			}
			fork := func() (forkengine.ForkOperation, error) {
				return forkEngine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: "C",
					ThroughTurnID: cTurns[0].ID, RequestID: "req-D", TargetSessionID: "D"})
			}
			purge := func() error { return purgeEngine.DeleteSession(ctx, "w", "M", true) }

			var op forkengine.ForkOperation
			var errFork, errPurge error
			done := make(chan struct{})
			go func() {
				defer close(done)
				if purgeFirst {
					errPurge = purge()
				} else {
					op, errFork = fork()
				}
			}()
			select {
			case <-first.paused:
			case <-done:
				t.Fatalf("the first transaction ended without pausing: fork %v, purge %v", errFork, errPurge)
			}
			if purgeFirst {
				op, errFork = fork()
			} else {
				errPurge = purge()
			}
			close(first.release)
			<-done
			require.NoError(t, errFork)
			require.NoError(t, errPurge)

			require.Eventually(t, func() bool {
				got, err := forker.GetOperation(ctx, "w", op.ID)
				return err == nil && got.Status == forkengine.StatusCommitted
			}, 30*time.Second, 5*time.Millisecond)
			closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			require.NoError(t, forkEngine.Close(closeCtx))
			require.NoError(t, purgeEngine.Close(closeCtx))
			in.close(t)
			requireCountsMatchRows(t, forker, "w", "after the race")
			n, err := forker.CountFamilyForks(ctx, "w", "C")
			require.NoError(t, err)
			require.Equal(t, 1, n, "the fork of C counts in C's family")
		})
	}
}
