package forkenginetest

import (
	"context"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// ClaimOperations leases up to c.Limit unfinished operations whose lease c may take, in
// (CreatedAt, ID) order after c.After, in one transaction.
func (s *MemStore) ClaimOperations(ctx context.Context, c forkengine.LeaseClaim) ([]forkengine.ForkOperation, error) {
	var claimed []forkengine.ForkOperation
	err := s.Update(ctx, func(t forkengine.Tx) error {
		claimed = nil
		tx := t.(*memTx)
		st := tx.current()
		ops := tx.operationsWhere("", func(op forkengine.ForkOperation) bool {
			return afterKey(c.After, op.CreatedAt, op.ID) && c.Claimable(op)
		})
		until := storedTime(c.Until)
		for _, op := range limited(ops, c.Limit) {
			stored := st.operations[rowKey{op.WorkspaceID, op.ID}]
			stored.LeaseOwner, stored.LeaseExpiresAt = c.Owner, &until
			st.operations[rowKey{op.WorkspaceID, op.ID}] = stored
			op.LeaseOwner, op.LeaseExpiresAt = c.Owner, clonePtr(&until)
			op.Snapshot = forkengine.Snapshot{}
			claimed = append(claimed, op)
		}
		return nil
	})
	return claimed, err
}

// ClaimOperation leases one operation to c.Owner if c may take it (LeaseClaim.Takes).
func (s *MemStore) ClaimOperation(ctx context.Context, key forkengine.OperationKey, c forkengine.LeaseClaim) (forkengine.ForkOperation, bool, error) {
	var claimed forkengine.ForkOperation
	var ok bool
	err := s.Update(ctx, func(t forkengine.Tx) error {
		st := t.(*memTx).current()
		stored, found := st.operations[rowKey{key.WorkspaceID, key.ID}]
		if !found {
			return notFound("fork operation", key.WorkspaceID, key.ID)
		}
		claimed, ok = stored.Clone(), c.Takes(stored)
		if !ok {
			return nil
		}
		until := storedTime(c.Until)
		stored.LeaseOwner, stored.LeaseExpiresAt = c.Owner, &until
		st.operations[rowKey{key.WorkspaceID, key.ID}] = stored
		claimed.LeaseOwner, claimed.LeaseExpiresAt = c.Owner, clonePtr(&until)
		claimed.Snapshot = forkengine.Snapshot{}
		return nil
	})
	return claimed, ok, err
}

// RenewLeases extends the leases owner still holds on ops.
func (s *MemStore) RenewLeases(ctx context.Context, owner string, ops []forkengine.OperationKey, until time.Time) ([]forkengine.OperationKey, error) {
	var renewed []forkengine.OperationKey
	err := s.Update(ctx, func(t forkengine.Tx) error {
		renewed = nil
		st := t.(*memTx).current()
		at := storedTime(until)
		for _, k := range ops {
			stored, ok := st.operations[rowKey{k.WorkspaceID, k.ID}]
			if !ok || stored.LeaseOwner != owner || !(stored.Status.Active() || stored.Status == forkengine.StatusUnknown) {
				continue
			}
			stored.LeaseExpiresAt = &at
			st.operations[rowKey{k.WorkspaceID, k.ID}] = stored
			renewed = append(renewed, k)
		}
		return nil
	})
	return renewed, err
}
