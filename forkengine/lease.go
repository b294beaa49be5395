package forkengine

import "time"

// Boundary is where a fork cuts a source: through one of its turns.
type Boundary struct {
	SessionID string
	TurnID    string
}

// OperationKey names one fork operation.
type OperationKey struct {
	WorkspaceID string
	ID          string
}

// Key returns the operation's key.
func (op ForkOperation) Key() OperationKey {
	return OperationKey{WorkspaceID: op.WorkspaceID, ID: op.ID}
}

// LeaseClaim asks Store.ClaimOperations for unfinished operations to drive.
type LeaseClaim struct {
	Owner string    // the claiming instance
	Now   time.Time // a lease that expires at or before Now is free
	Until time.Time // the claimed leases' expiry
	After PageCursor
	Limit int
	// TakeOwn also claims operations already leased to Owner: a restarted instance with the same
	// id drives nothing yet, so whatever it holds was left by its previous run.
	TakeOwn bool
	// TakeAll claims every unfinished operation whatever its lease: for a store that only this
	// process can open (SQLite), where every lease at start-up belongs to a dead process.
	TakeAll bool
	// TakeOthers also claims operations leased to any owner but c.Owner, live or not: on a store
	// only this process can open, every other owner is a process that died, whatever expiry it
	// wrote. The sweeps of such a store use it for the process's whole life, so the reconcile
	// lease of an unknown operation a dead process was holding is not waited out; this process's
	// own leases still follow the ordinary rules (it may be driving them right now).
	TakeOthers bool
}

// LeaseFree reports whether c may take op's lease.
func (c LeaseClaim) LeaseFree(op ForkOperation) bool {
	switch {
	case c.TakeAll, op.LeaseOwner == "", op.LeaseExpiresAt == nil:
		return true
	case c.TakeOwn && op.LeaseOwner == c.Owner:
		return true
	case c.TakeOthers && op.LeaseOwner != c.Owner:
		return true
	}
	return !op.LeaseExpiresAt.After(c.Now)
}

// Claimable is the rule of Store.ClaimOperations: an unfinished operation whose lease c may
// take, or an unknown one whose next reconcile attempt is due at c.Now and whose lease is free,
// already c.Owner's (the instance that ended its dispatch reconciles it first), or, with
// c.TakeAll or c.TakeOthers, anyone's.
func (c LeaseClaim) Claimable(op ForkOperation) bool {
	switch {
	case op.Status.Active():
		return c.LeaseFree(op)
	case op.Status == StatusUnknown && op.NextReconcileAt != nil && !op.NextReconcileAt.After(c.Now):
		own := c
		own.TakeOwn = true
		return own.LeaseFree(op)
	}
	return false
}

// Takes is the rule of Store.ClaimOperation: an unfinished or unknown operation whose lease is
// free, c.Owner's or (c.TakeOthers) another owner's, whatever its schedule (a person asked for it
// now).
func (c LeaseClaim) Takes(op ForkOperation) bool {
	if !op.Status.Active() && op.Status != StatusUnknown {
		return false
	}
	own := c
	own.TakeOwn = true
	return own.LeaseFree(op)
}

// sessionLock is the Tx.Lock key of a session id (which may name no row yet): reports, message
// appends, deletions, fork starts from it and commits into it take it.
func sessionLock(workspaceID, id string) string { return "session/" + workspaceID + "/" + id }

// familyLock is the Tx.Lock key of a fork family, named by its root: fork titles count the
// family's forks under it.
func familyLock(workspaceID, rootID string) string { return "family/" + workspaceID + "/" + rootID }
