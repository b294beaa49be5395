package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// testSessionCountsBackfill: a database written before session_counts existed gets counts that
// agree with its rows, for every filter shape the counts answer.
func testSessionCountsBackfill(t *testing.T, cfg Config) {
	ctx := context.Background()
	old := openAtVersion(t, cfg, 9) // the schema of a binary from before version 10
	hidden := forkengine.Session{WorkspaceID: "ws", ID: "hidden", CreatedAt: at(3)}
	deleted := forkengine.Session{WorkspaceID: "ws", ID: "deleted", Visible: true, CreatedAt: at(4), DeletedAt: new(at(5))}
	require.NoError(t, old.Update(ctx, func(tx forkengine.Tx) error {
		for i, id := range []string{"root", "fork"} {
			if err := upsertSessionAtVersion(ctx, tx, 9, forkengine.Session{WorkspaceID: "ws", ID: id, Visible: true, CreatedAt: at(i)}); err != nil {
				return err
			}
		}
		for _, s := range []forkengine.Session{hidden, deleted, {WorkspaceID: "other", ID: "x", Visible: true}} {
			if err := upsertSessionAtVersion(ctx, tx, 9, s); err != nil {
				return err
			}
		}
		return tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: "ws", TargetSessionID: "fork", OperationID: "op", SourceSessionID: "root"})
	}))
	require.NoError(t, old.Close())

	db := openTest(t, cfg)
	require.Equal(t, len(migrations)-old.migrated, db.migrated)
	yes, no := true, false
	for _, f := range []forkengine.SessionFilter{
		{}, {RootsOnly: true}, {IncludeDeleted: true}, {IncludeDeleted: true, RootsOnly: true},
		{Visible: &yes}, {Visible: &no}, {Visible: &yes, RootsOnly: true, IncludeDeleted: true},
	} {
		rows, err := db.ListSessions(ctx, "ws", f, forkengine.PageCursor{}, 0)
		require.NoError(t, err)
		n, err := db.CountSessions(ctx, "ws", f)
		require.NoError(t, err)
		require.Equal(t, len(rows), n, "%+v", f)
	}
	n, err := db.CountSessions(ctx, "ws", forkengine.SessionFilter{})
	require.NoError(t, err)
	require.Equal(t, 3, n, "root, fork and hidden")
}

func TestSessionCountsBackfillSQLite(t *testing.T) {
	t.Parallel()
	testSessionCountsBackfill(t, sqliteConfig(t))
}

func TestSessionCountsBackfillPostgres(t *testing.T) {
	requirePostgres(t)
	testSessionCountsBackfill(t, postgresConfig(t))
}

// at is a test timestamp, minutes after a fixed start.
func at(minutes int) time.Time {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(minutes) * time.Minute)
}

// testConcurrentCountedWrites: writers side by side (on PostgreSQL on several connections, so
// several count shards) store sessions, hide some and fork others; the counts still add up.
func testConcurrentCountedWrites(t *testing.T, cfg Config) {
	db := openTest(t, cfg)
	ctx := context.Background()
	const writers, each = 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				errs <- db.Update(ctx, func(tx forkengine.Tx) error {
					s := forkengine.Session{WorkspaceID: "ws", ID: id, Visible: i%3 != 0, CreatedAt: at(i)}
					if err := tx.UpsertSession(ctx, s); err != nil {
						return err
					}
					if i%2 == 0 {
						return tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: "ws", TargetSessionID: id, OperationID: "op" + id, SourceSessionID: "w0-1"})
					}
					return nil
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	yes := true
	for _, f := range []forkengine.SessionFilter{{}, {RootsOnly: true}, {Visible: &yes, RootsOnly: true}} {
		rows, err := db.ListSessions(ctx, "ws", f, forkengine.PageCursor{}, 0)
		require.NoError(t, err)
		n, err := db.CountSessions(ctx, "ws", f)
		require.NoError(t, err)
		require.Equal(t, len(rows), n, "%+v", f)
	}
	n, err := db.CountSessions(ctx, "ws", forkengine.SessionFilter{RootsOnly: true})
	require.NoError(t, err)
	require.Equal(t, writers*(each/2), n, "the odd-numbered sessions of each writer are roots")
}

func TestConcurrentCountedWritesSQLite(t *testing.T) {
	t.Parallel()
	testConcurrentCountedWrites(t, sqliteConfig(t))
}

func TestConcurrentCountedWritesPostgres(t *testing.T) {
	requirePostgres(t)
	testConcurrentCountedWrites(t, postgresConfig(t))
}
