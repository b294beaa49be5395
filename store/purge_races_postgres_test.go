package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// raceTransactions runs first in a transaction on a, and second on b while first's transaction
// is still open; first commits once second has returned or is waiting on one of first's locks.
// It returns what the two Updates returned. Two handles with their own pools are two instances.
func raceTransactions(t *testing.T, a, b *DB, first, second func(tx forkengine.Tx) error) (errFirst, errSecond error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started, secondDone := make(chan struct{}, 1), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- a.Update(ctx, func(tx forkengine.Tx) error {
			if err := first(tx); err != nil {
				return err
			}
			var pid int64
			if err := tx.(*txn).with(ctx).Raw("SELECT pg_backend_pid()").Scan(&pid).Error; err != nil {
				return err
			}
			select {
			case started <- struct{}{}:
			default: // a retried transaction: the pid is known already
			}
			return awaitDoneOrBlockedBy(ctx, a, pid, secondDone)
		})
	}()
	select {
	case <-started:
	case err := <-firstDone:
		return err, nil
	}
	errSecond = b.Update(ctx, second)
	close(secondDone)
	return <-firstDone, errSecond
}

// awaitDoneOrBlockedBy returns once done is closed or some backend waits on a lock that the
// backend pid holds.
func awaitDoneOrBlockedBy(ctx context.Context, db *DB, pid int64, done <-chan struct{}) error {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		var blocked bool
		if err := db.gorm.WithContext(ctx).Raw(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE ? = ANY (pg_blocking_pids(pid)))`, pid).Scan(&blocked).Error; err != nil {
			return err
		}
		if blocked {
			return nil
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Purging a fork source S deletes the lineage S -> C, which moves C between session count
// classes. A writer changing C's class on another instance at the same moment (it holds only
// C's session lock, the purge only S's) must leave the counts equal to the rows, whichever of
// the two transactions reaches the database first.
func TestPurgeOfForkSourceBesideWriteOfForkKeepsSessionCountsPostgres(t *testing.T) {
	writers := []struct {
		name  string
		write func(ctx context.Context, tx forkengine.Tx) error
		gone  bool
	}{
		{"soft delete", func(ctx context.Context, tx forkengine.Tx) error {
			return tx.SoftDeleteSession(ctx, "w", "C", at(5))
		}, false},
		{"re-report hidden", func(ctx context.Context, tx forkengine.Tx) error {
			c, err := tx.GetSession(ctx, "w", "C")
			if err != nil {
				return err
			}
			c.Visible = false
			return tx.UpsertSession(ctx, c)
		}, false},
		{"purge of the fork", func(ctx context.Context, tx forkengine.Tx) error {
			return tx.PurgeSession(ctx, "w", "C")
		}, true},
	}
	for _, w := range writers {
		for _, purgeFirst := range []bool{false, true} {
			name := w.name + " first"
			if purgeFirst {
				name = "purge of the source first, then " + w.name
			}
			t.Run(name, func(t *testing.T) {
				in := newTwoInstances(t)
				ctx := context.Background()
				in.seedSource(t, "S", 1)
				forkAndAcknowledge(t, in, "S", "S-t1", "C")
				in.close(t)
				requireCountsMatchRows(t, in.dbs[0], "w", "seeded")

				purge := func(tx forkengine.Tx) error { return tx.PurgeSession(ctx, "w", "S") }
				write := func(tx forkengine.Tx) error { return w.write(ctx, tx) }
				var errFirst, errSecond error
				if purgeFirst {
					errFirst, errSecond = raceTransactions(t, in.dbs[0], in.dbs[1], purge, write)
				} else {
					errFirst, errSecond = raceTransactions(t, in.dbs[0], in.dbs[1], write, purge)
				}
				require.NoError(t, errFirst)
				require.NoError(t, errSecond)

				_, err := in.dbs[0].GetSession(ctx, "w", "C")
				if w.gone {
					require.ErrorIs(t, err, forkengine.ErrNotFound)
				} else {
					require.NoError(t, err)
				}
				requireCountsMatchRows(t, in.dbs[0], "w", "after the race")
			})
		}
	}
}

// forkAndAcknowledge forks source through turn into target on the first instance and waits for
// the fork to commit.
func forkAndAcknowledge(t *testing.T, in *twoInstances, source, turn, target string) forkengine.ForkOperation {
	t.Helper()
	ctx := context.Background()
	op, err := in.engines[0].StartFork(ctx, forkengine.ForkInput{WorkspaceID: "w", SourceSessionID: source,
		ThroughTurnID: turn, RequestID: "req-" + target, TargetSessionID: target})
	require.NoError(t, err)
	var got forkengine.ForkOperation
	require.Eventually(t, func() bool {
		got, err = in.dbs[0].GetOperation(ctx, "w", op.ID)
		return err == nil && got.Status == forkengine.StatusCommitted
	}, 30*time.Second, 5*time.Millisecond)
	_, err = in.engines[0].Acknowledge(ctx, "w", op.ID, "")
	require.NoError(t, err)
	return got
}

// The same race through the engines' public API: purge fork sources on one instance while the
// other soft-deletes their forks.
func TestEnginePurgesOfSourcesBesideDeletesOfForksKeepCountsPostgres(t *testing.T) {
	in := newTwoInstances(t)
	ctx := context.Background()
	const pairs = 30
	for i := range pairs {
		src := fmt.Sprintf("src%d", i)
		in.seedSource(t, src, 1)
		forkAndAcknowledge(t, in, src, src+"-t1", "child-"+src)
	}
	requireCountsMatchRows(t, in.dbs[0], "w", "seeded")
	in.together(2*pairs, func(e *forkengine.Engine, i int) {
		src := fmt.Sprintf("src%d", i/2)
		if i%2 == 0 {
			require.NoError(t, e.DeleteSession(ctx, "w", "child-"+src, false))
		} else {
			require.NoError(t, e.DeleteSession(ctx, "w", src, true))
		}
	})
	in.close(t)
	requireCountsMatchRows(t, in.dbs[0], "w", "after the race")
}
