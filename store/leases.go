package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/forkgraph/forkgraph/forkengine"
)

// ClaimOperations leases up to c.Limit unfinished operations to c.Owner, in creation order, in
// one transaction: the free ones are selected (on PostgreSQL with FOR UPDATE SKIP LOCKED, so
// concurrent claimers pass over each other's rows instead of waiting or taking them twice), then
// stamped with the new owner and expiry. The partial index fork_operations_recoverable serves the
// scan. Snapshots are not loaded.
func (db *DB) ClaimOperations(ctx context.Context, c forkengine.LeaseClaim) ([]forkengine.ForkOperation, error) {
	if c.Owner == "" {
		return nil, fmt.Errorf("%w: a lease claim needs an owner", ErrConfig)
	}
	var claimed []forkengine.ForkOperation
	err := db.transaction(ctx, func(gtx *gorm.DB) error {
		q := queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, statements: db.statements}
		keys, err := q.freeOperationKeys(ctx, c)
		if err != nil || len(keys) == 0 {
			claimed = nil
			return err
		}
		until := micros(c.Until)
		byWorkspace := map[string][]string{}
		for _, k := range keys {
			byWorkspace[k.WorkspaceID] = append(byWorkspace[k.WorkspaceID], k.ID)
		}
		for ws, ids := range byWorkspace {
			err := gtx.WithContext(ctx).Exec(`UPDATE fork_operations SET lease_owner = ?, lease_expires_at_us = ?
				WHERE workspace_id = ? AND id IN ?`, c.Owner, until, ws, ids).Error
			if err != nil {
				return classify(err, "lease %d operations of %s", len(ids), ws)
			}
		}
		claimed, err = q.operationsByKeys(ctx, keys)
		return err
	})
	return claimed, err
}

// freeOperationKeys selects the operations c may claim, locking them on PostgreSQL.
func (q queries) freeOperationKeys(ctx context.Context, c forkengine.LeaseClaim) ([]forkengine.OperationKey, error) {
	db := keyset(q.with(ctx).Table("fork_operations").Select("workspace_id, id").
		Where("status IN ?", activeStatuses), c.After)
	if !c.TakeAll {
		free := "(lease_owner = '' OR lease_expires_at_us IS NULL OR lease_expires_at_us <= ?"
		args := []any{micros(c.Now)}
		if c.TakeOwn {
			free += " OR lease_owner = ?"
			args = append(args, c.Owner)
		}
		db = db.Where(free+")", args...)
	}
	db = limit(db.Order("created_at_us, id"), c.Limit)
	if q.dialect.skipLocked {
		db = db.Clauses(forUpdateSkipLocked)
	}
	var keys []struct{ WorkspaceID, ID string }
	if err := db.Scan(&keys).Error; err != nil {
		return nil, classify(err, "select claimable operations")
	}
	out := make([]forkengine.OperationKey, len(keys))
	for i, k := range keys {
		out[i] = forkengine.OperationKey{WorkspaceID: k.WorkspaceID, ID: k.ID}
	}
	return out, nil
}

// operationsByKeys reads the operations named by keys, in the order of keys, without snapshots.
func (q queries) operationsByKeys(ctx context.Context, keys []forkengine.OperationKey) ([]forkengine.ForkOperation, error) {
	byKey := map[forkengine.OperationKey]forkengine.ForkOperation{}
	byWorkspace := map[string][]string{}
	for _, k := range keys {
		byWorkspace[k.WorkspaceID] = append(byWorkspace[k.WorkspaceID], k.ID)
	}
	for ws, ids := range byWorkspace {
		ops, err := q.findOperationsWithoutSnapshots(q.with(ctx).Where("workspace_id = ? AND id IN ?", ws, ids), "claimed operations")
		if err != nil {
			return nil, err
		}
		for _, op := range ops {
			byKey[op.Key()] = op
		}
	}
	out := make([]forkengine.ForkOperation, 0, len(keys))
	for _, k := range keys {
		if op, ok := byKey[k]; ok {
			out = append(out, op)
		}
	}
	return out, nil
}

// RenewLeases extends the leases owner still holds on unfinished operations among ops, one
// statement per workspace, and returns the ones it renewed.
func (db *DB) RenewLeases(ctx context.Context, owner string, ops []forkengine.OperationKey, until time.Time) ([]forkengine.OperationKey, error) {
	byWorkspace := map[string][]string{}
	for _, k := range ops {
		byWorkspace[k.WorkspaceID] = append(byWorkspace[k.WorkspaceID], k.ID)
	}
	var renewed []forkengine.OperationKey
	for ws, ids := range byWorkspace {
		var got []string
		err := db.gorm.WithContext(ctx).Raw(`UPDATE fork_operations SET lease_expires_at_us = ?
			WHERE workspace_id = ? AND id IN ? AND lease_owner = ? AND status IN ? RETURNING id`,
			micros(until), ws, ids, owner, activeStatuses).Scan(&got).Error
		if err != nil {
			return renewed, classify(err, "renew %d leases in %s", len(ids), ws)
		}
		for _, id := range got {
			renewed = append(renewed, forkengine.OperationKey{WorkspaceID: ws, ID: id})
		}
	}
	return renewed, nil
}
