package store

import (
	"context"
	"fmt"
	"slices"
)

// Lock takes a transaction-scoped lock on each key, in sorted order, so two transactions that
// name a common key run one after the other and never deadlock over the keys. On PostgreSQL each
// key is an advisory lock in the current schema's namespace (pg_advisory_xact_lock on the hashes
// of schema and key; a hash collision only serialises two unrelated writes). On SQLite it does
// nothing: BEGIN IMMEDIATE already serialises every writer.
func (tx *txn) Lock(ctx context.Context, keys ...string) error {
	if !tx.dialect.advisoryLocks || len(keys) == 0 {
		return nil
	}
	for _, key := range slices.Compact(slices.Sorted(slices.Values(keys))) {
		tx.statements.Add(1)
		if _, err := tx.with(ctx).Statement.ConnPool.ExecContext(ctx,
			"SELECT pg_advisory_xact_lock(hashtext(current_schema()), hashtext($1))", key); err != nil {
			return fmt.Errorf("lock %s: %w", key, err)
		}
	}
	return nil
}
