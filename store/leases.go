package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
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
		q := queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, statements: db.statements, rows: db.rows}
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

// freeOperationKeys selects the operations c may claim, locking them on PostgreSQL: the
// unfinished ones (index fork_operations_recoverable) and the unknown ones due for a reconcile
// attempt (index fork_operations_reconcile_due), merged in creation order.
func (q queries) freeOperationKeys(ctx context.Context, c forkengine.LeaseClaim) ([]forkengine.OperationKey, error) {
	own := c
	own.TakeOwn = true // an unknown operation's holder reconciles it first (LeaseClaim.Claimable)
	var rows []claimKey
	for _, part := range []struct {
		where string
		args  []any
		claim forkengine.LeaseClaim
	}{{isActiveSQL, nil, c}, {isReconcileDueSQL, []any{micros(c.Now)}, own}} {
		where, args := leaseFree(part.where, part.args, part.claim)
		where, args = afterSQL(where, args, c.After)
		query := "SELECT workspace_id, id, created_at_us FROM fork_operations WHERE " + where + " ORDER BY created_at_us, id" + limitSQL(c.Limit)
		if q.dialect.skipLocked {
			query += " FOR UPDATE SKIP LOCKED"
		}
		var k claimKey
		if err := scanEach(ctx, q, query, args, []any{&k.WorkspaceID, &k.ID, &k.CreatedAtUs}, func() { rows = append(rows, k) }); err != nil {
			return nil, classify(err, "select claimable operations")
		}
	}
	slices.SortFunc(rows, func(a, b claimKey) int {
		return cmp.Or(cmp.Compare(a.CreatedAtUs, b.CreatedAtUs), cmp.Compare(a.ID, b.ID))
	})
	if c.Limit > 0 && len(rows) > c.Limit {
		rows = rows[:c.Limit] // the rest stay locked until commit, unclaimed: the next page takes them
	}
	out := make([]forkengine.OperationKey, len(rows))
	for i, k := range rows {
		out[i] = forkengine.OperationKey{WorkspaceID: k.WorkspaceID, ID: k.ID}
	}
	return out, nil
}

type claimKey struct {
	WorkspaceID, ID string
	CreatedAtUs     int64
}

// leaseFree narrows a fixed WHERE to the operations whose lease c may take
// (LeaseClaim.LeaseFree): free at c.Now (never taken, or expired), or, with c.TakeOwn, already
// c.Owner's, or, with c.TakeOthers, anyone else's; with c.TakeAll (or both) every one.
func leaseFree(where string, args []any, c forkengine.LeaseClaim) (string, []any) {
	if c.TakeAll || c.TakeOwn && c.TakeOthers {
		return where, args
	}
	free := " AND (lease_owner = '' OR lease_expires_at_us IS NULL OR lease_expires_at_us <= ?"
	args = append(slices.Clone(args), micros(c.Now))
	switch {
	case c.TakeOwn:
		free += " OR lease_owner = ?"
		args = append(args, c.Owner)
	case c.TakeOthers:
		free += " OR lease_owner <> ?"
		args = append(args, c.Owner)
	}
	return where + free + ")", args
}

// ClaimOperation leases one unfinished or unknown operation to c.Owner if c may take it
// (LeaseClaim.Takes), in one transaction with the row locked.
func (db *DB) ClaimOperation(ctx context.Context, key forkengine.OperationKey, c forkengine.LeaseClaim) (forkengine.ForkOperation, bool, error) {
	var op forkengine.ForkOperation
	var claimed bool
	err := db.transaction(ctx, func(gtx *gorm.DB) error {
		q := queries{db: gtx, dialect: db.dialect, snapshots: db.snapshots, statements: db.statements, rows: db.rows}
		claimed = false
		where := "workspace_id = ? AND id = ?"
		if db.dialect.skipLocked {
			where += " FOR UPDATE"
		}
		ops, err := q.operationsWithoutSnapshots(ctx, "operation to claim", where, key.WorkspaceID, key.ID)
		if err != nil {
			return err
		}
		if len(ops) == 0 {
			return notFound("fork operation", key.WorkspaceID, key.ID)
		}
		if op = ops[0]; !c.Takes(op) {
			return nil
		}
		err = gtx.WithContext(ctx).Exec(`UPDATE fork_operations SET lease_owner = ?, lease_expires_at_us = ?
			WHERE workspace_id = ? AND id = ?`, c.Owner, micros(c.Until), key.WorkspaceID, key.ID).Error
		if err != nil {
			return classify(err, "lease operation %s", key.ID)
		}
		until := c.Until.UTC().Truncate(time.Microsecond)
		op.LeaseOwner, op.LeaseExpiresAt, claimed = c.Owner, &until, true
		return nil
	})
	return op, claimed, err
}

// operationsByKeys reads the operations named by keys, in the order of keys, without snapshots.
func (q queries) operationsByKeys(ctx context.Context, keys []forkengine.OperationKey) ([]forkengine.ForkOperation, error) {
	byKey := map[forkengine.OperationKey]forkengine.ForkOperation{}
	byWorkspace := map[string][]string{}
	for _, k := range keys {
		byWorkspace[k.WorkspaceID] = append(byWorkspace[k.WorkspaceID], k.ID)
	}
	for ws, ids := range byWorkspace {
		in, args := q.inList(ids, ws)
		ops, err := q.operationsWithoutSnapshots(ctx, "claimed operations", "workspace_id = ? AND id IN "+in, args...)
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

// renewableStatuses are the statuses whose leases RenewLeases extends.
var renewableStatuses = append(slices.Clone(activeStatuses), string(forkengine.StatusUnknown))

// RenewLeases extends the leases owner still holds on unfinished operations among ops, one
// statement per workspace, and returns the ones it renewed.
func (db *DB) RenewLeases(ctx context.Context, owner string, ops []forkengine.OperationKey, until time.Time) ([]forkengine.OperationKey, error) {
	byWorkspace := map[string][]string{}
	for _, k := range ops {
		byWorkspace[k.WorkspaceID] = append(byWorkspace[k.WorkspaceID], k.ID)
	}
	var renewed []forkengine.OperationKey
	for ws, ids := range byWorkspace {
		q := db.queries
		in, args := q.inList(ids, micros(until), ws)
		args = append(args, owner)
		for _, s := range renewableStatuses {
			args = append(args, s)
		}
		got, err := q.queryStrings(ctx, `UPDATE fork_operations SET lease_expires_at_us = ?
			WHERE workspace_id = ? AND id IN `+in+` AND lease_owner = ? AND status IN `+placeholders(len(renewableStatuses))+` RETURNING id`, args...)
		if err != nil {
			return renewed, classify(err, "renew %d leases in %s", len(ids), ws)
		}
		for _, id := range got {
			renewed = append(renewed, forkengine.OperationKey{WorkspaceID: ws, ID: id})
		}
	}
	return renewed, nil
}
