package store

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// benchCountedWrites runs write in one transaction per iteration (i counts from 1), once with the
// count triggers and once on a store where drop has removed them ("Counted=true/false"), on
// SQLite and, when FORKGRAPH_TEST_POSTGRES_DSN is set, PostgreSQL: what keeping a count costs.
func benchCountedWrites(b *testing.B, drop func(*testing.B, *DB), write func(ctx context.Context, tx forkengine.Tx, i int) error) {
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
					drop(b, db)
				}
				ctx := context.Background()
				i := 0
				for b.Loop() {
					i++
					require.NoError(b, db.Update(ctx, func(tx forkengine.Tx) error { return write(ctx, tx, i) }))
				}
			})
		}
	}
}

// dropTriggers runs the DROP TRIGGER statements of the store's driver.
func dropTriggers(b *testing.B, db *DB, sqlite, postgres []string) {
	stmts := sqlite
	if db.Driver() == DriverPostgres {
		stmts = postgres
	}
	for _, s := range stmts {
		require.NoError(b, db.gorm.Exec(s).Error, s)
	}
}
