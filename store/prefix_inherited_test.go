package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// A fork's prepare through an inherited turn of its source (a fork of a child at a turn the child
// shares with its ancestors) reads the prefix in the same six statements whether the boundary is
// a turn of the source's parent at depth 1 or of its third ancestor ten forks deep, and whether
// the prefix is 10 turns or 300, where the walk it replaces read every prefix turn and sent their
// ids in IN lists. The read is the walk's (the contract suite checks it at every boundary); here
// its counts are checked against the chain's two messages a turn.
func TestInheritedPrefixStatements(t *testing.T) {
	t.Run(DriverSQLite, func(t *testing.T) { testInheritedPrefixStatements(t, migratedSQLite) })
	t.Run(DriverPostgres, func(t *testing.T) {
		requirePostgres(t)
		testInheritedPrefixStatements(t, postgresConfig)
	})
}

func testInheritedPrefixStatements(t *testing.T, config func(testing.TB) Config) {
	ctx := context.Background()
	type cost struct{ statements, rows int64 }
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
				InheritedMessages: 2 * c.through}, p, name)
			s, rows = db.Statements(), db.RowsRead()
			walk, err := forkengine.WalkPrefix(ctx, db, "ws", c.session, c.through)
			walked := cost{db.Statements() - s, db.RowsRead() - rows}
			require.NoError(t, err)
			walk.InheritedMessages = p.InheritedMessages
			require.Equal(t, walk, p, name)
			t.Logf("%s: %d statements, %d rows read; the walk: %d statements, %d rows", name, got.statements, got.rows, walked.statements, walked.rows)
			require.Equal(t, int64(6), got.statements, name)
		}
		// The fork commits from the read: the child holds the prefix's messages.
		e := chainEngine(t, db)
		op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: "c10",
			ThroughTurnID: forkengine.PresentedTurnID(mustKey(t, db, "c10"), r+7), RequestID: "r-at-c7", TargetSessionID: "at-c7"})
		require.NoError(t, err)
		require.Equal(t, 2*(r+7), op.Snapshot.PrefixMessages)
		op, err = e.ProcessOperation(ctx, "ws", op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		n, err := db.CountSessionMessages(ctx, "ws", []string{"at-c7"})
		require.NoError(t, err)
		require.Equal(t, int(2*(r+7)), n["at-c7"])
	}
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
	e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": forkenginetest.NewScriptedDriver()},
		Logger: quietLog, NoBackground: true, InstanceID: "chain-forks"})
	require.NoError(t, err)
	return e
}
