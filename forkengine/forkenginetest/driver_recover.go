package forkenginetest

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

var _ forkengine.BindingRecoverer = (*ScriptedDriver)(nil)

// RecoverStep scripts one RecoverBinding call. Func, when set, answers instead of Result and Err.
type RecoverStep struct {
	Result forkengine.BindingRecoveryResult
	Err    error
	Func   func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error)
}

// QueueRecover scripts the next RecoverBinding calls, in order. Calls beyond the queue answer
// absent. The engine asks only for sessions whose descriptor sets RecoverBinding.
func (d *ScriptedDriver) QueueRecover(steps ...RecoverStep) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.recoverSteps = append(d.recoverSteps, steps...)
}

// RecoverCalls is the number of RecoverBinding calls so far.
func (d *ScriptedDriver) RecoverCalls() int { return int(d.recoverCalls.Load()) }

// RecoverRequests returns a copy of every RecoverBinding request received, in call order.
func (d *ScriptedDriver) RecoverRequests() []forkengine.BindingRecoveryRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]forkengine.BindingRecoveryRequest(nil), d.recoveries...)
}

// RecoverBinding takes the next scripted step; unscripted calls answer absent.
func (d *ScriptedDriver) RecoverBinding(_ context.Context, req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
	d.recoverCalls.Add(1)
	d.mu.Lock()
	d.recoveries = append(d.recoveries, req)
	if len(d.recoverSteps) == 0 {
		d.mu.Unlock()
		return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryAbsent, Error: "nothing scripted"}, nil
	}
	step := d.recoverSteps[0]
	d.recoverSteps = d.recoverSteps[1:]
	d.mu.Unlock()
	if step.Func != nil {
		return step.Func(req)
	}
	return step.Result, step.Err
}

// FoundBinding answers a recovery of req with provider turn providerTurnID of the session's own
// provider session and a binding naming it.
func FoundBinding(req forkengine.BindingRecoveryRequest, providerTurnID string) forkengine.BindingRecoveryResult {
	return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryFound,
		ProviderSessionID: req.Session.ProviderSessionID, ProviderTurnID: providerTurnID,
		ProviderTurnBinding: []byte(`{"recovered":"` + providerTurnID + `"}`)}
}
