package store

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkSessionWriteCounted measures what keeping session_counts adds to a write: each
// iteration is one transaction that stores a new session and, as a fork's commit does, a
// lineage that makes it a fork. "Counted" runs with the triggers, "Uncounted" on a store whose
// triggers were dropped. PostgreSQL runs too when FORKGRAPH_TEST_POSTGRES_DSN is set.
func BenchmarkSessionWriteCounted(b *testing.B) {
	configs := map[string]func(testing.TB) Config{DriverSQLite: sqliteConfig}
	if os.Getenv(postgresDSNEnv) != "" {
		configs[DriverPostgres] = postgresConfig
	}
	for driver, config := range configs {
		for _, counted := range []bool{true, false} {
			name := fmt.Sprintf("%s/Counted=%v", driver, counted)
			b.Run(name, func(b *testing.B) {
				db, err := Open(context.Background(), config(b))
				require.NoError(b, err)
				b.Cleanup(func() { require.NoError(b, db.Close()) })
				if !counted {
					dropSessionCountTriggers(b, db)
				}
				ctx := context.Background()
				i := 0
				for b.Loop() {
					i++
					id := fmt.Sprintf("s%d", i)
					require.NoError(b, db.Update(ctx, func(tx forkengine.Tx) error {
						if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Visible: true}); err != nil {
							return err
						}
						return tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: "ws", TargetSessionID: id, OperationID: "op" + id, SourceSessionID: "root"})
					}))
				}
			})
		}
	}
}

// dropSessionCountTriggers leaves db without the triggers that keep session_counts.
func dropSessionCountTriggers(b *testing.B, db *DB) {
	stmts := []string{"DROP TRIGGER sessions_counted_insert", "DROP TRIGGER sessions_counted_delete",
		"DROP TRIGGER sessions_counted_update", "DROP TRIGGER lineages_counted_insert", "DROP TRIGGER lineages_counted_delete"}
	if db.Driver() == DriverPostgres {
		stmts = []string{"DROP TRIGGER sessions_counted ON sessions", "DROP TRIGGER sessions_recounted ON sessions",
			"DROP TRIGGER lineages_counted ON lineages"}
	}
	for _, s := range stmts {
		require.NoError(b, db.gorm.Exec(s).Error, s)
	}
}
