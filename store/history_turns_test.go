package store

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
)

// A batch of turn ids of every kind (a root's stored turns, presented ids of two children in
// sparse runs, a turn the deeper child adopted and wrote a message of its own to, an id no
// session presents) gets, turn by turn, what reading each id alone gets: messagesOfTurns groups
// its runs and its parts back into the turns asked for, in position order, and the text read
// (MessageTextsByTurnIDs) is the same messages' turn, role and content. On both drivers.
func TestMessagesOfMixedTurnBatches(t *testing.T) {
	t.Parallel()
	onBothDrivers(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		c := buildChain(t, db, 6, 5) // root t1…t6, c1…c5 one turn each: c5 presents 1…10
		pages := func(session string) []forkengine.Turn {
			page, err := db.TurnsBySessionIDs(ctx, "ws", []string{session}, 0, 0)
			require.NoError(t, err)
			return page[session]
		}
		deep, mid := pages(c.deep), pages("c2")
		require.Len(t, deep, 11)
		e := scriptedEngine(t, db, "mixed")
		_, err := e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "ws", SessionID: c.deep, TurnID: deep[3].ID,
			Messages: []forkengine.MessageInput{{Role: forkengine.RoleAssistant, Content: "the child's own note"}}})
		require.NoError(t, err)

		asked := []string{deep[0].ID, deep[1].ID, deep[3].ID, deep[4].ID, deep[7].ID, deep[9].ID, deep[10].ID,
			mid[1].ID, mid[6].ID, "root-t2", "root-t5", forkengine.PresentedTurnID("nokeynokeyk", 3)}
		slices.Reverse(asked) // the order asked is not the order of sequences
		batch, err := db.MessagesByTurnIDs(ctx, "ws", asked)
		require.NoError(t, err)
		texts, err := db.MessageTextsByTurnIDs(ctx, "ws", asked, 100)
		require.NoError(t, err)
		require.Len(t, batch, len(asked)-1, "every turn but the unknown one")
		for _, id := range asked {
			alone, err := db.MessagesByTurnIDs(ctx, "ws", []string{id})
			require.NoError(t, err)
			require.Equal(t, alone[id], batch[id], "turn %s", id)
			want := make([]forkengine.Message, len(batch[id]))
			for i, m := range batch[id] {
				require.Equal(t, id, m.TurnID)
				want[i] = forkengine.Message{WorkspaceID: "ws", TurnID: id, Role: m.Role, Content: m.Content}
			}
			require.Equal(t, want, nilIfEmpty(texts[id]), "texts of %s", id)
		}
		adopted := batch[deep[3].ID]
		require.Len(t, adopted, 3)
		require.Equal(t, []string{"prompt", "answer", "the child's own note"},
			[]string{adopted[0].Content, adopted[1].Content, adopted[2].Content})
		require.Equal(t, c.deep, adopted[2].SessionID)
		require.True(t, adopted[0].Position < adopted[1].Position && adopted[1].Position < adopted[2].Position)
	})
}

// onBothDrivers runs test on a new store of each driver, SQLite and (with
// FORKGRAPH_TEST_POSTGRES_DSN) PostgreSQL, as subtests named by the driver.
func onBothDrivers(t *testing.T, test func(t *testing.T, db *DB)) {
	onBothConfigs(t, func(t *testing.T, cfg Config) { test(t, openTest(t, cfg)) })
}

// onBothConfigs is onBothDrivers for a test that opens its stores itself: the config of a new
// store of each driver.
func onBothConfigs(t *testing.T, test func(t *testing.T, cfg Config)) {
	for _, d := range []struct {
		name   string
		config func(testing.TB) Config
	}{{DriverSQLite, sqliteConfig}, {DriverPostgres, postgresConfig}} {
		t.Run(d.name, func(t *testing.T) {
			if d.name == DriverPostgres {
				requirePostgres(t)
			}
			test(t, d.config(t))
		})
	}
}

// scriptedEngine is an engine over db with the scripted driver and no background work, so a test
// processes each operation itself; instance names it.
func scriptedEngine(t testing.TB, db *DB, instance string) *forkengine.Engine {
	t.Helper()
	e, err := forkengine.New(forkengine.Config{Store: db, Drivers: map[string]forkengine.Driver{"scripted": forkenginetest.NewScriptedDriver()},
		Logger: quietLog, NoBackground: true, InstanceID: instance})
	require.NoError(t, err)
	return e
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return []T{}
	}
	return s
}
