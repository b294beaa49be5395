package forkenginetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// leasedOperation is an unfinished operation leased to owner until the minute `until`.
func leasedOperation(id string, status forkengine.OperationStatus, owner string, until int) forkengine.ForkOperation {
	op := newOperation(wsA, id, "src-"+id, "t-"+id, "dst-"+id, status)
	op.LeaseOwner, op.LeaseExpiresAt = owner, timePtr(at(until))
	return op
}

func claimIDs(t *testing.T, s forkengine.Store, c forkengine.LeaseClaim) []string {
	t.Helper()
	claimed, err := s.ClaimOperations(context.Background(), c)
	require.NoError(t, err)
	ids := make([]string, len(claimed))
	for i, op := range claimed {
		require.Equal(t, c.Owner, op.LeaseOwner, "a claimed operation comes back leased to the claimer")
		require.True(t, op.LeaseExpiresAt.Equal(c.Until), "with the claim's expiry")
		ids[i] = op.ID
	}
	return ids
}

func leaseTests() map[string]storeTest {
	return map[string]storeTest{
		"InsertKeepsTheLeaseAndReadsReturnIt": func(t *testing.T, s forkengine.Store) {
			insertOperations(t, s, leasedOperation("op1", forkengine.StatusPrepared, "a", 20))
			got, err := s.GetOperation(context.Background(), wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, "a", got.LeaseOwner)
			require.True(t, got.LeaseExpiresAt.Equal(at(20)))
		},
		"ClaimTakesOnlyFreeUnfinishedOperationsInCreationOrder": func(t *testing.T, s forkengine.Store) {
			live := leasedOperation("live", forkengine.StatusDispatching, "a", 20)
			expired := leasedOperation("expired", forkengine.StatusDispatching, "a", 5)
			expired.CreatedAt = at(9)
			never := leasedOperation("never", forkengine.StatusPrepared, "", 0)
			never.LeaseExpiresAt = nil
			accepted := leasedOperation("accepted", forkengine.StatusProviderAccepted, "a", 10) // expires exactly now
			accepted.CreatedAt = at(11)
			done := leasedOperation("done", forkengine.StatusCommitted, "a", 5)
			unknown := leasedOperation("unknown", forkengine.StatusUnknown, "a", 5)
			insertOperations(t, s, live, expired, never, accepted, done, unknown)
			c := forkengine.LeaseClaim{Owner: "b", Now: at(10), Until: at(30), Limit: 10}
			require.Equal(t, []string{"expired", "never", "accepted"}, claimIDs(t, s, c))
			require.Empty(t, claimIDs(t, s, c), "claimed leases are live now")
			got, err := s.GetOperation(context.Background(), wsA, "live")
			require.NoError(t, err)
			require.Equal(t, "a", got.LeaseOwner, "a live lease is never touched")
		},
		"TakeOwnAndTakeAll": func(t *testing.T, s forkengine.Store) {
			insertOperations(t, s, leasedOperation("mine", forkengine.StatusPrepared, "b", 20),
				leasedOperation("theirs", forkengine.StatusPrepared, "a", 20))
			require.Equal(t, []string{"mine"}, claimIDs(t, s, forkengine.LeaseClaim{Owner: "b", Now: at(10), Until: at(40), Limit: 10, TakeOwn: true}))
			require.Equal(t, []string{"mine", "theirs"}, claimIDs(t, s, forkengine.LeaseClaim{Owner: "c", Now: at(10), Until: at(40), Limit: 10, TakeAll: true}))
		},
		"TakeOthersLeavesOnlyTheClaimersOwnLiveLeases": func(t *testing.T, s forkengine.Store) {
			mineDue := leasedOperation("mine-due", forkengine.StatusUnknown, "b", 20)
			mineDue.NextReconcileAt = timePtr(at(9))
			theirsDue := leasedOperation("theirs-due", forkengine.StatusUnknown, "a", 20)
			theirsDue.NextReconcileAt = timePtr(at(9))
			theirsLater := leasedOperation("theirs-later", forkengine.StatusUnknown, "a", 20)
			theirsLater.NextReconcileAt = timePtr(at(11))
			insertOperations(t, s, leasedOperation("mine", forkengine.StatusDispatching, "b", 20),
				leasedOperation("theirs", forkengine.StatusPrepared, "a", 20),
				leasedOperation("mine-expired", forkengine.StatusPrepared, "b", 5),
				mineDue, theirsDue, theirsLater)
			c := forkengine.LeaseClaim{Owner: "b", Now: at(10), Until: at(40), Limit: 10, TakeOthers: true}
			require.ElementsMatch(t, []string{"theirs", "mine-expired", "mine-due", "theirs-due"}, claimIDs(t, s, c),
				"every other owner's live lease, this owner's expired one and due unknowns; not this owner's live one")
			for _, id := range []string{"mine", "theirs-later"} {
				op, claimed, err := s.ClaimOperation(context.Background(), forkengine.OperationKey{WorkspaceID: wsA, ID: id}, c)
				require.NoError(t, err)
				require.True(t, claimed, "a single claim takes %s, its own or another's, due or not", id)
				require.Equal(t, "b", op.LeaseOwner)
			}
		},
		"ClaimPagesAfterACursor": func(t *testing.T, s forkengine.Store) {
			var ops []forkengine.ForkOperation
			for i := range 5 {
				op := leasedOperation(fmt.Sprintf("op%d", i), forkengine.StatusPrepared, "", 0)
				op.CreatedAt = at(i)
				ops = append(ops, op)
			}
			insertOperations(t, s, ops...)
			c := forkengine.LeaseClaim{Owner: "b", Now: at(10), Until: at(40), Limit: 2, TakeAll: true}
			require.Equal(t, []string{"op0", "op1"}, claimIDs(t, s, c))
			c.After = forkengine.PageCursor{Time: at(1), ID: "op1"}
			require.Equal(t, []string{"op2", "op3"}, claimIDs(t, s, c))
		},
		"ConcurrentClaimersNeverShareAnOperation": func(t *testing.T, s forkengine.Store) {
			var ops []forkengine.ForkOperation
			for i := range 24 {
				ops = append(ops, leasedOperation(fmt.Sprintf("op%02d", i), forkengine.StatusPrepared, "", 0))
			}
			insertOperations(t, s, ops...)
			// Bounded, and nothing fails inside the claimers: a store whose claims block each
			// other or overlap fails here in seconds, never as a hang of the suite.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var mu sync.Mutex
			seen := map[string]string{}
			var twice []string
			var errs []error
			var wg sync.WaitGroup
			for w := range 4 {
				owner := fmt.Sprintf("i%d", w)
				wg.Go(func() {
					for ctx.Err() == nil {
						claimed, err := s.ClaimOperations(ctx, forkengine.LeaseClaim{Owner: owner, Now: at(10), Until: at(40), Limit: 3})
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						}
						for _, op := range claimed {
							if seen[op.ID] != "" {
								twice = append(twice, fmt.Sprintf("%s by %s and %s", op.ID, seen[op.ID], owner))
							}
							seen[op.ID] = owner
						}
						mu.Unlock()
						if err != nil || len(claimed) == 0 {
							return
						}
					}
				})
			}
			wg.Wait()
			require.Empty(t, errs, "claims failed (or waited past the bound for each other)")
			require.Empty(t, twice, "operations claimed twice")
			require.Len(t, seen, len(ops), "every free operation was claimed by someone")
			for id, owner := range seen {
				got, err := s.GetOperation(context.Background(), wsA, id)
				require.NoError(t, err)
				require.Equal(t, owner, got.LeaseOwner)
			}
		},
		"StatusChangesAreACompareAndSwapOnTheLeaseOwner": func(t *testing.T, s forkengine.Store) {
			op := leasedOperation("op1", forkengine.StatusPrepared, "a", 5)
			insertOperations(t, s, op)
			require.Equal(t, []string{"op1"}, claimIDs(t, s, forkengine.LeaseClaim{Owner: "b", Now: at(10), Until: at(40), Limit: 1}))
			stale := op
			stale.Status = forkengine.StatusDispatching
			var moved bool
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				moved, err = tx.UpdateOperation(ctx, stale, forkengine.StatusPrepared)
				return err
			})
			require.False(t, moved, "the instance whose lease was taken over cannot move the operation")
			current, err := s.GetOperation(context.Background(), wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusPrepared, current.Status)
			next := current
			next.Status = forkengine.StatusDispatching
			next.LeaseOwner, next.LeaseExpiresAt = "b", timePtr(at(1)) // an update never writes the lease
			update(t, s, func(ctx context.Context, tx forkengine.Tx) (err error) {
				moved, err = tx.UpdateOperation(ctx, next, forkengine.StatusPrepared)
				return err
			})
			require.True(t, moved, "the new holder can")
			current, err = s.GetOperation(context.Background(), wsA, "op1")
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusDispatching, current.Status)
			require.True(t, current.LeaseExpiresAt.Equal(at(40)), "the stored lease is kept")
		},
		"ClaimTakesUnknownOperationsWhoseReconcileIsDue": func(t *testing.T, s forkengine.Store) {
			due := leasedOperation("due", forkengine.StatusUnknown, "a", 5)
			due.NextReconcileAt = timePtr(at(9))
			later := leasedOperation("later", forkengine.StatusUnknown, "a", 5)
			later.NextReconcileAt = timePtr(at(11))
			unscheduled := leasedOperation("unscheduled", forkengine.StatusUnknown, "a", 5)
			heldElsewhere := leasedOperation("held", forkengine.StatusUnknown, "c", 20)
			heldElsewhere.NextReconcileAt = timePtr(at(9))
			mine := leasedOperation("mine", forkengine.StatusUnknown, "b", 20) // the instance that ended its dispatch
			mine.NextReconcileAt = timePtr(at(9))
			failed := leasedOperation("failed", forkengine.StatusFailed, "", 0)
			failed.NextReconcileAt = timePtr(at(9))
			insertOperations(t, s, due, later, unscheduled, heldElsewhere, mine, failed)
			require.ElementsMatch(t, []string{"due", "mine"}, claimIDs(t, s, forkengine.LeaseClaim{Owner: "b", Now: at(10), Until: at(30), Limit: 10}))
			require.ElementsMatch(t, []string{"due", "mine", "held"}, claimIDs(t, s, forkengine.LeaseClaim{Owner: "d", Now: at(10), Until: at(40), Limit: 10, TakeAll: true}),
				"on an exclusive store every due one is free, whoever holds it")
		},
		"ClaimOperationTakesOneFreeOrOwnLease": func(t *testing.T, s forkengine.Store) {
			insertOperations(t, s, leasedOperation("free", forkengine.StatusUnknown, "a", 5),
				leasedOperation("mine", forkengine.StatusDispatching, "b", 20),
				leasedOperation("theirs", forkengine.StatusUnknown, "a", 20),
				leasedOperation("done", forkengine.StatusCommitted, "", 0))
			ctx := context.Background()
			c := forkengine.LeaseClaim{Owner: "b", Now: at(10), Until: at(30)}
			for id, want := range map[string]bool{"free": true, "mine": true, "theirs": false, "done": false} {
				op, claimed, err := s.ClaimOperation(ctx, forkengine.OperationKey{WorkspaceID: wsA, ID: id}, c)
				require.NoError(t, err)
				require.Equal(t, want, claimed, id)
				require.Equal(t, id, op.ID)
				got, err := s.GetOperation(ctx, wsA, id)
				require.NoError(t, err)
				if want {
					require.Equal(t, "b", op.LeaseOwner)
					require.Equal(t, "b", got.LeaseOwner)
					require.True(t, got.LeaseExpiresAt.Equal(at(30)), id)
				} else {
					require.NotEqual(t, "b", got.LeaseOwner, id)
				}
			}
			_, _, err := s.ClaimOperation(ctx, forkengine.OperationKey{WorkspaceID: wsB, ID: "free"}, c)
			require.ErrorIs(t, err, forkengine.ErrNotFound, "claims are scoped by workspace")
		},
		"RenewExtendsOnlyTheOwnersUnfinishedLeases": func(t *testing.T, s forkengine.Store) {
			insertOperations(t, s, leasedOperation("mine", forkengine.StatusDispatching, "a", 20),
				leasedOperation("theirs", forkengine.StatusDispatching, "b", 20),
				leasedOperation("finished", forkengine.StatusFailed, "a", 20))
			keys := []forkengine.OperationKey{{WorkspaceID: wsA, ID: "mine"}, {WorkspaceID: wsA, ID: "theirs"},
				{WorkspaceID: wsA, ID: "finished"}, {WorkspaceID: wsB, ID: "mine"}}
			renewed, err := s.RenewLeases(context.Background(), "a", keys, at(50))
			require.NoError(t, err)
			require.Equal(t, []forkengine.OperationKey{{WorkspaceID: wsA, ID: "mine"}}, renewed)
			for id, want := range map[string]time.Time{"mine": at(50), "theirs": at(20), "finished": at(20)} {
				got, err := s.GetOperation(context.Background(), wsA, id)
				require.NoError(t, err)
				require.True(t, got.LeaseExpiresAt.Equal(want), "%s: lease until %v, want %v", id, got.LeaseExpiresAt, want)
			}
		},
	}
}
