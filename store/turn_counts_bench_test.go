package store

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkTurnCopyCounted measures what keeping turn_counts adds to a fork's commit: each
// iteration is one transaction that stores a new session and its 20 copied turns in one
// InsertTurns. "Counted" runs with the triggers, "Uncounted" on a store whose turn count
// triggers were dropped. PostgreSQL runs too when FORKGRAPH_TEST_POSTGRES_DSN is set.
func BenchmarkTurnCopyCounted(b *testing.B) {
	configs := map[string]func(testing.TB) Config{DriverSQLite: sqliteConfig}
	if os.Getenv(postgresDSNEnv) != "" {
		configs[DriverPostgres] = postgresConfig
	}
	for driver, config := range configs {
		for _, counted := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/Counted=%v", driver, counted), func(b *testing.B) {
				db, err := Open(context.Background(), config(b))
				require.NoError(b, err)
				b.Cleanup(func() { require.NoError(b, db.Close()) })
				if !counted {
					dropTurnCountTriggers(b, db)
				}
				ctx := context.Background()
				i := 0
				for b.Loop() {
					i++
					id := fmt.Sprintf("s%d", i)
					turns := make([]forkengine.Turn, 20)
					for n := range turns {
						turns[n] = forkengine.Turn{WorkspaceID: "ws", SessionID: id, ID: fmt.Sprintf("%s-t%d", id, n), Sequence: int64(n + 1)}
					}
					require.NoError(b, db.Update(ctx, func(tx forkengine.Tx) error {
						if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Visible: true}); err != nil {
							return err
						}
						return tx.InsertTurns(ctx, turns)
					}))
				}
			})
		}
	}
}

// dropTurnCountTriggers leaves db without the triggers that keep turn_counts.
func dropTurnCountTriggers(b *testing.B, db *DB) {
	stmts := []string{"DROP TRIGGER turns_counted_insert", "DROP TRIGGER turns_counted_delete", "DROP TRIGGER turns_counted_update"}
	if db.Driver() == DriverPostgres {
		stmts = []string{"DROP TRIGGER turns_counted_insert ON turns", "DROP TRIGGER turns_counted_delete ON turns",
			"DROP TRIGGER turns_counted_update ON turns"}
	}
	for _, s := range stmts {
		require.NoError(b, db.gorm.Exec(s).Error, s)
	}
}
