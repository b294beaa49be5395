package forkengine

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// DefaultLeaseDuration is how long an instance holds a fork operation without renewing it.
const DefaultLeaseDuration = 15 * time.Second

// leaseKeeper is the set of operations this engine is driving right now, whose leases it renews.
// A count per key: recovery and a request's background work may briefly hold the same one.
type leaseKeeper struct {
	mu   sync.Mutex
	held map[OperationKey]int
}

func (k *leaseKeeper) hold(key OperationKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held == nil {
		k.held = map[OperationKey]int{}
	}
	k.held[key]++
}

func (k *leaseKeeper) release(key OperationKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held[key]--; k.held[key] <= 0 {
		delete(k.held, key)
	}
}

func (k *leaseKeeper) holds(key OperationKey) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.held[key] > 0
}

func (k *leaseKeeper) keys() []OperationKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]OperationKey, 0, len(k.held))
	for key := range k.held {
		out = append(out, key)
	}
	return out
}

// InstanceID is the lease owner this engine writes.
func (e *Engine) InstanceID() string { return e.cfg.InstanceID }

// HeldLeases is how many operations this engine is driving now (for metrics and tests).
func (e *Engine) HeldLeases() int { return len(e.leases.keys()) }

// leaseUntil is the expiry of a lease taken or renewed now.
func (e *Engine) leaseUntil() time.Time { return e.now().Add(e.cfg.LeaseDuration) }

// drives reports whether this engine may move op: it holds op's lease. Any other instance's
// operation, even with an expired lease, is taken over by a claim first (TakeOver), never moved
// behind its holder's back.
func (e *Engine) drives(op ForkOperation) bool { return op.LeaseOwner == e.cfg.InstanceID }

// RenewLeases extends the lease of every operation this engine is driving. A lease that was taken
// over meanwhile (this instance stalled past its expiry) is reported: its work can no longer move
// the operation, and the new holder finishes it.
func (e *Engine) RenewLeases(ctx context.Context) error {
	keys := e.leases.keys()
	if len(keys) == 0 {
		return nil
	}
	renewed, err := e.store.RenewLeases(ctx, e.cfg.InstanceID, keys, e.leaseUntil())
	if err != nil {
		return fmt.Errorf("renew %d fork leases: %w", len(keys), err)
	}
	if len(renewed) < len(keys) {
		kept := map[OperationKey]bool{}
		for _, k := range renewed {
			kept[k] = true
		}
		for _, k := range keys {
			if !kept[k] && e.leases.holds(k) {
				e.log.Warn("fork lease lost: another instance took the operation over, or it finished",
					"workspace", k.WorkspaceID, "operation", k.ID)
			}
		}
	}
	return nil
}

// TakeOver claims the unfinished operations whose lease expired (their instance died or
// stalled; on an exclusive store, any other owner's) and finishes them by the start-up recovery rules (SPEC §2.7): dispatching becomes
// unknown with no driver call; prepared and provider_accepted ones are driven in the background,
// as by StartRecovery. The report counts what was settled here and what was handed on. It runs
// beside live work on every instance: claims never overlap, and an operation this engine is
// still driving (its renewal came late) is only re-leased, not touched.
func (e *Engine) TakeOver(ctx context.Context) (RecoveryReport, error) {
	return e.startTakeover(ctx, e.sweepClaim())
}

// sweepClaim is what a running instance's sweep takes over: expired leases; on a store only this
// process can open (Config.ExclusiveStore), also every lease another owner holds, expired or
// not. There each restart may have a new instance id, and a process killed soon after it started
// leaves live leases behind, among them those of the unknown operations it had just settled:
// waiting them out would put their reconciliation a whole lease late.
func (e *Engine) sweepClaim() LeaseClaim { return LeaseClaim{TakeOthers: e.cfg.ExclusiveStore} }

// MaintainLeases renews this engine's leases and takes over expired ones every third of the
// lease duration, until ctx ends. The server runs it for its whole life.
func (e *Engine) MaintainLeases(ctx context.Context) {
	// A third, not the whole: renewed every third, a lease always has two thirds left, so a
	// renewal that comes late by up to that (a stalled statement, a long pause) still keeps it.
	ticks, stop := e.cfg.newTicker(e.cfg.LeaseDuration / 3)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		if err := e.RenewLeases(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("renew fork leases", "err", err)
		}
		report, err := e.TakeOver(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.Error("take over expired fork leases", "err", err)
		}
		// An unknown delivery whose reconcile attempt is due is claimed here too; that is the
		// normal course of a lost answer, not a takeover, so it is logged at debug level.
		if taken := report.Scanned - report.Reconciled; taken > 0 {
			e.log.Info("took over forks whose lease expired", "taken", taken, "unknown", report.Unknown,
				"resumed", report.Resumed-report.Reconciled, "errors", len(report.Errors))
		}
		if report.Reconciled > 0 {
			e.log.Debug("reconciling unknown deliveries that are due", "operations", report.Reconciled)
		}
	}
}

// eachClaimed claims pages of operations as c describes (Owner, Now, Until and Limit filled in
// here) in creation order, calling fn for each claimed one. It stops with an error when a claim
// fails or ctx ends.
func (e *Engine) eachClaimed(ctx context.Context, c LeaseClaim, fn func(ForkOperation)) error {
	c.Owner, c.Limit = e.cfg.InstanceID, e.cfg.RecoveryPageSize
	for {
		c.Now = e.now()
		c.Until = c.Now.Add(e.cfg.LeaseDuration)
		page, err := e.store.ClaimOperations(ctx, c)
		if err != nil {
			return fmt.Errorf("claim fork operations after %v: %w", c.After, err)
		}
		for _, op := range page {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("recover: %w", err)
			}
			fn(op)
		}
		if len(page) < c.Limit {
			return nil
		}
		last := page[len(page)-1]
		c.After = PageCursor{Time: last.CreatedAt, ID: last.ID}
	}
}

// defaultInstanceID names this process: host, process id and a random suffix, so two processes
// never share one even on one host.
func defaultInstanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "forkgraph"
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), newUUIDv4()[:8])
}
