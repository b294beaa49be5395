package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkFamilyCount compares, for one root with n committed forks, the count a title reads
// now (the kept per-root count) with the walk over the family it replaced (countFamilyForksSQL,
// still what a session inside a family gets), and what keeping the count adds to a fork's
// prepare (addFamilyForks).
func BenchmarkFamilyCount(b *testing.B) {
	for _, n := range []int{10, 300, 1000} {
		db, err := Open(context.Background(), Config{DSN: filepath.Join(b.TempDir(), "f.db"), Logger: quietLog})
		require.NoError(b, err)
		b.Cleanup(func() { require.NoError(b, db.Close()) })
		seedFamily(b, db, n)
		ctx := context.Background()
		b.Run(fmt.Sprintf("forks=%d/KeptCount", n), func(b *testing.B) {
			for b.Loop() {
				_, err := db.CountFamilyForks(ctx, "ws", "root")
				require.NoError(b, err)
			}
		})
		b.Run(fmt.Sprintf("forks=%d/FamilyWalk", n), func(b *testing.B) {
			q := db.queries
			for b.Loop() {
				_, err := q.queryInt(ctx, countFamilyForksSQL, "root", "ws", "ws", "root", "ws")
				require.NoError(b, err)
			}
		})
		b.Run(fmt.Sprintf("forks=%d/AddOneInTransaction", n), func(b *testing.B) {
			require.NoError(b, db.Update(ctx, func(tx forkengine.Tx) error {
				for b.Loop() {
					if err := tx.(*txn).addFamilyForks(ctx, "ws", "root", 1); err != nil {
						return err
					}
				}
				return nil
			}))
		})
	}
}

// seedFamily stores n committed forks of "root", each with its lineage.
func seedFamily(b *testing.B, db *DB, n int) {
	b.Helper()
	require.NoError(b, db.Update(context.Background(), func(tx forkengine.Tx) error {
		ctx := context.Background()
		for i := range n {
			op := forkengine.ForkOperation{WorkspaceID: "ws", ID: fmt.Sprintf("op-%d", i), RequestID: fmt.Sprintf("r-%d", i),
				SourceSessionID: "root", TargetSessionID: fmt.Sprintf("t-%d", i), ThroughTurnID: "turn",
				Status: forkengine.StatusCommitted}
			if err := tx.InsertOperation(ctx, op); err != nil {
				return err
			}
			err := tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: "ws", OperationID: op.ID,
				SourceSessionID: "root", TargetSessionID: op.TargetSessionID, SourceTurnID: "turn"})
			if err != nil {
				return err
			}
		}
		return nil
	}))
}
