package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkTurnCopyCounted measures what keeping turn_counts adds to a fork's commit: each
// iteration is one transaction that stores a new session and its 20 copied turns in one
// InsertTurns. "Counted" runs with the triggers, "Uncounted" on a store whose turn count
// triggers were dropped. PostgreSQL runs too when FORKGRAPH_TEST_POSTGRES_DSN is set.
func BenchmarkTurnCopyCounted(b *testing.B) {
	benchCountedWrites(b, dropTurnCountTriggers, func(ctx context.Context, tx forkengine.Tx, i int) error {
		id := fmt.Sprintf("s%d", i)
		turns := make([]forkengine.Turn, 20)
		for n := range turns {
			turns[n] = forkengine.Turn{WorkspaceID: "ws", SessionID: id, ID: fmt.Sprintf("%s-t%d", id, n), Sequence: int64(n + 1)}
		}
		if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Visible: true}); err != nil {
			return err
		}
		return tx.InsertTurns(ctx, turns)
	})
}

// dropTurnCountTriggers leaves db without the triggers that keep turn_counts.
func dropTurnCountTriggers(b *testing.B, db *DB) {
	dropTriggers(b, db,
		[]string{"DROP TRIGGER turns_counted_insert", "DROP TRIGGER turns_counted_delete", "DROP TRIGGER turns_counted_update"},
		[]string{"DROP TRIGGER turns_counted_insert ON turns", "DROP TRIGGER turns_counted_delete ON turns",
			"DROP TRIGGER turns_counted_update ON turns"})
}
