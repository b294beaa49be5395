package store

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/benchclock"
)

// A fork's prepare through an inherited turn of its source (a fork of a child at a turn the child
// shares with its ancestors) reads the prefix in the same six statements whether the boundary is
// a turn of the source's parent at depth 1 or of its third ancestor ten forks deep, and whether
// the prefix is 10 turns or 300, where the walk it replaces read every prefix turn and sent their
// ids in IN lists. The read is the walk's (the contract suite checks it at every boundary); here
// its counts are checked against the chain's two messages a turn.
func TestInheritedPrefixStatements(t *testing.T) {
	t.Parallel()
	t.Run(DriverSQLite, func(t *testing.T) { testInheritedPrefixStatements(t, migratedSQLite) })
	t.Run(DriverPostgres, func(t *testing.T) {
		requirePostgres(t)
		testInheritedPrefixStatements(t, postgresConfig)
	})
}

func testInheritedPrefixStatements(t *testing.T, config func(testing.TB) Config) {
	ctx := context.Background()
	type cost struct{ statements, rows int64 }
	forks := map[int]cost{} // a whole fork through c7's turn, per prefix length
	for _, rootTurns := range []int{10, 300} {
		db := openTest(t, config(t))
		buildChain(t, db, rootTurns, 10)
		r := int64(rootTurns)
		for _, c := range []struct {
			name    string
			session string
			through int64
		}{
			{"depth 1, a turn of its parent", "c1", 5},
			{"depth 1, its parent's last turn", "c1", r},
			{"depth 10, a turn of its 3rd ancestor", "c10", r + 7},
			{"depth 10, a turn of the root", "c10", 5},
		} {
			name := fmt.Sprintf("%s (prefix of %d turns)", c.name, rootTurns)
			s, rows := db.Statements(), db.RowsRead()
			p, ok, err := db.ReadPrefix(ctx, "ws", c.session, c.through)
			got := cost{db.Statements() - s, db.RowsRead() - rows}
			require.NoError(t, err)
			require.True(t, ok, "%s: read, not left to the walk", name)
			h, _, err := db.HistoryOf(ctx, "ws", c.session)
			require.NoError(t, err)
			require.Equal(t, forkengine.Prefix{Turns: int(c.through), Last: forkengine.PresentedTurnID(h.Key, c.through),
				InheritedMessages: 2 * c.through, Counted: true}, p, name)
			s, rows = db.Statements(), db.RowsRead()
			walk, err := forkengine.WalkPrefix(ctx, db, "ws", c.session, c.through)
			walked := cost{db.Statements() - s, db.RowsRead() - rows}
			require.NoError(t, err)
			walk.InheritedMessages, walk.Counted = p.InheritedMessages, p.Counted
			require.Equal(t, walk, p, name)
			t.Logf("%s: %d statements, %d rows read; the walk: %d statements, %d rows", name, got.statements, got.rows, walked.statements, walked.rows)
			require.Equal(t, int64(6), got.statements, name)
		}
		// The fork commits from the read: the child holds the prefix's messages.
		e := chainEngine(t, db)
		before, rows := db.Statements(), db.RowsRead()
		op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: "c10",
			ThroughTurnID: forkengine.PresentedTurnID(mustKey(t, db, "c10"), r+7), RequestID: "r-at-c7", TargetSessionID: "at-c7"})
		require.NoError(t, err)
		require.Equal(t, 2*(r+7), op.Snapshot.PrefixMessages)
		op, err = e.ProcessOperation(ctx, "ws", op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		forks[rootTurns] = cost{db.Statements() - before, db.RowsRead() - rows}
		n, err := db.CountSessionMessages(ctx, "ws", []string{"at-c7"})
		require.NoError(t, err)
		require.Equal(t, int(2*(r+7)), n["at-c7"])
	}
	t.Logf("a fork through c7's turn of c10, prepare and commit: %+v (statements, rows read) by prefix length", forks)
	require.Equal(t, forks[10], forks[300], "the whole fork, prepare and commit: its statements and rows whatever the prefix's length")
}

func mustKey(t *testing.T, db *DB, session string) string {
	t.Helper()
	h, ok, err := db.HistoryOf(context.Background(), "ws", session)
	require.NoError(t, err)
	require.True(t, ok)
	return h.Key
}

// chainEngine is an engine over db as buildChain's, for forks of its chain.
func chainEngine(t *testing.T, db *DB) *forkengine.Engine {
	t.Helper()
	e := scriptedEngine(t, db, "chain-forks")
	return e
}

// BenchmarkInheritedPrefix reads the prefix of a fork ten deep through a turn of its third
// ancestor, over a root of 1,311 turns (the 1 GB benchmark's), by ReadPrefix and by the walk it
// replaces, and by ReadPrefix through turns of the root, on SQLite and, when FORKGRAPH_TEST_POSTGRES_DSN is set, PostgreSQL. cpu-us/op is the
// process's CPU (Getrusage), the database's included for SQLite, the client's alone for
// PostgreSQL:
//
//	go test ./store -run '^$' -bench BenchmarkInheritedPrefix -benchtime 200x -count 3
func BenchmarkInheritedPrefix(b *testing.B) {
	configs := map[string]func(testing.TB) Config{DriverSQLite: sqliteConfig}
	if os.Getenv(postgresDSNEnv) != "" {
		configs[DriverPostgres] = postgresConfig
	}
	for _, name := range []string{DriverSQLite, DriverPostgres} {
		config, ok := configs[name]
		if !ok {
			continue
		}
		b.Run("driver="+name, func(b *testing.B) {
			db, err := Open(context.Background(), config(b))
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, db.Close()) })
			const rootTurns = 1311
			buildChain(b, db, rootTurns, 10)
			ctx := context.Background()
			through := int64(rootTurns + 7)
			for _, read := range []struct {
				name string
				read func() (forkengine.Prefix, error)
			}{
				{"ReadPrefix", func() (forkengine.Prefix, error) {
					p, _, err := db.ReadPrefix(ctx, "ws", "c10", through)
					return p, err
				}},
				{"WalkPrefix", func() (forkengine.Prefix, error) { return forkengine.WalkPrefix(ctx, db, "ws", "c10", through) }},
				// Through the root's 1,311th turn, then its 5th: the count's range above the
				// boundary is 9 and then 1,315 turns (the walk of the 5th reads 5).
				{"ReadPrefixAtTheRootsLast", func() (forkengine.Prefix, error) {
					p, _, err := db.ReadPrefix(ctx, "ws", "c10", rootTurns)
					p.Turns += 7
					return p, err
				}},
				{"ReadPrefixAtTheRootsFifth", func() (forkengine.Prefix, error) {
					p, _, err := db.ReadPrefix(ctx, "ws", "c10", 5)
					p.Turns = int(through)
					return p, err
				}},
			} {
				b.Run("read="+read.name, func(b *testing.B) {
					s := db.Statements()
					cpu0 := benchclock.ProcessCPU(b)
					for b.Loop() {
						p, err := read.read()
						if err != nil || p.Turns != int(through) {
							b.Fatalf("%v, %d turns", err, p.Turns)
						}
					}
					b.ReportMetric(float64(benchclock.ProcessCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-us/op")
					b.ReportMetric(float64(db.Statements()-s)/float64(b.N), "statements/op")
				})
			}
		})
	}
}
