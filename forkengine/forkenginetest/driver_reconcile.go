package forkenginetest

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

var _ forkengine.Reconciler = (*ScriptedDriver)(nil)

// ReconcileStep scripts one Reconcile call.
type ReconcileStep struct {
	Result forkengine.ReconcileResult
	Err    error
}

// QueueReconcile scripts the next Reconcile calls, in order. Calls beyond the queue answer
// unknown. The driver reconciles only for sessions whose descriptor sets Reconcile.
func (d *ScriptedDriver) QueueReconcile(steps ...ReconcileStep) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reconcileSteps = append(d.reconcileSteps, steps...)
}

// ReconcileCalls is the number of Reconcile calls so far.
func (d *ScriptedDriver) ReconcileCalls() int { return int(d.reconcileCalls.Load()) }

// ReconcileRequests returns a copy of every Reconcile request received, in call order.
func (d *ScriptedDriver) ReconcileRequests() []forkengine.ReconcileRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]forkengine.ReconcileRequest(nil), d.reconciles...)
}

// Reconcile takes the next scripted step; unscripted calls answer unknown.
func (d *ScriptedDriver) Reconcile(_ context.Context, req forkengine.ReconcileRequest) (forkengine.ReconcileResult, error) {
	d.reconcileCalls.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reconciles = append(d.reconciles, req)
	if len(d.reconcileSteps) == 0 {
		return forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown}, nil
	}
	step := d.reconcileSteps[0]
	d.reconcileSteps = d.reconcileSteps[1:]
	return step.Result, step.Err
}

// FoundResult is the answer "the provider has the child" that matches what AcceptedResult would
// have returned for req's fork.
func FoundResult(req forkengine.ReconcileRequest) forkengine.ReconcileResult {
	res := AcceptedResult(req.ForkRequest)
	return forkengine.ReconcileResult{Answer: forkengine.ReconcileFound, ProviderSessionID: res.ProviderSessionID,
		StateBindingMode: res.StateBindingMode, TurnBindings: res.TurnBindings, Receipt: res.Receipt}
}
