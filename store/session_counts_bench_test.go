package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkSessionWriteCounted measures what keeping session_counts adds to a write: each
// iteration is one transaction that stores a new session and, as a fork's commit does, a
// lineage that makes it a fork. "Counted" runs with the triggers, "Uncounted" on a store whose
// triggers were dropped. PostgreSQL runs too when FORKGRAPH_TEST_POSTGRES_DSN is set.
func BenchmarkSessionWriteCounted(b *testing.B) {
	benchCountedWrites(b, dropSessionCountTriggers, func(ctx context.Context, tx forkengine.Tx, i int) error {
		id := fmt.Sprintf("s%d", i)
		if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Visible: true}); err != nil {
			return err
		}
		return tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: "ws", TargetSessionID: id, OperationID: "op" + id, SourceSessionID: "root"})
	})
}

// dropSessionCountTriggers leaves db without the triggers that keep session_counts.
func dropSessionCountTriggers(b *testing.B, db *DB) {
	dropTriggers(b, db,
		[]string{"DROP TRIGGER sessions_counted_insert", "DROP TRIGGER sessions_counted_delete",
			"DROP TRIGGER sessions_counted_update", "DROP TRIGGER lineages_counted_insert", "DROP TRIGGER lineages_counted_delete"},
		[]string{"DROP TRIGGER sessions_counted ON sessions", "DROP TRIGGER sessions_recounted ON sessions",
			"DROP TRIGGER lineages_counted ON lineages"})
}
