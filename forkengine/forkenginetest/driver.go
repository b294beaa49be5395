package forkenginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/forkgraph/forkgraph/forkengine"
)

// ScriptedDescriptor is the descriptor a NewScriptedDriver reports until told otherwise.
var ScriptedDescriptor = forkengine.Descriptor{
	Kind: "scripted", Version: "v1", StateBindingMode: forkengine.BindingHostCopy, ThroughTurn: true,
}

// ForkStep scripts one Fork call. Func, when set, answers the call instead of Result and Err.
type ForkStep struct {
	Result forkengine.ForkResult
	Err    error
	Func   func(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error)
}

// ScriptedDriver is a forkengine.Driver whose answers a test programs and whose calls it counts.
// Unless scripted otherwise it describes every session with ScriptedDescriptor, says every probe
// is forkable, and accepts every fork with a valid result for the descriptor's binding mode
// (child session "child-<operation id>"; provider_owned: one binding per bound turn and a
// receipt). It is safe for concurrent use.
type ScriptedDriver struct {
	describeCalls, probeCalls, probeBatches, forkCalls, reconcileCalls, recoverCalls atomic.Int64

	mu                sync.Mutex
	descriptor        forkengine.Descriptor
	describeErr       error
	sessionDescriptor map[string]describeAnswer
	probeAnswer       bool
	probeErr          error
	turnProbe         map[string]bool // by provider turn id
	forkSteps         []ForkStep
	gate              <-chan struct{}
	entered           chan forkengine.ForkRequest
	probes            [][]forkengine.Probe
	forks             []forkengine.ForkRequest
	reconcileSteps    []ReconcileStep
	reconciles        []forkengine.ReconcileRequest
	recoverSteps      []RecoverStep
	recoveries        []forkengine.BindingRecoveryRequest
}

type describeAnswer struct {
	desc forkengine.Descriptor
	err  error
}

var _ forkengine.Driver = (*ScriptedDriver)(nil)

// NewScriptedDriver returns a driver that accepts everything (see ScriptedDriver).
func NewScriptedDriver() *ScriptedDriver {
	return &ScriptedDriver{
		descriptor:        ScriptedDescriptor,
		sessionDescriptor: map[string]describeAnswer{},
		probeAnswer:       true,
		turnProbe:         map[string]bool{},
		entered:           make(chan forkengine.ForkRequest, 1024),
	}
}

// SetDescriptor sets the answer of Describe for every session without its own.
func (d *ScriptedDriver) SetDescriptor(desc forkengine.Descriptor, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.descriptor, d.describeErr = desc, err
}

// SetSessionDescriptor sets the answer of Describe for one session id.
func (d *ScriptedDriver) SetSessionDescriptor(sessionID string, desc forkengine.Descriptor, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sessionDescriptor[sessionID] = describeAnswer{desc, err}
}

// SetProbe sets the answer of every probe without its own, and the error of every ProbeTurns call
// (an error answers the whole batch).
func (d *ScriptedDriver) SetProbe(answer bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.probeAnswer, d.probeErr = answer, err
}

// SetTurnProbe sets the probe answer for one provider turn id.
func (d *ScriptedDriver) SetTurnProbe(providerTurnID string, answer bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.turnProbe[providerTurnID] = answer
}

// QueueFork scripts the next Fork calls, one step each, in order. Calls beyond the queue get the
// default acceptance.
func (d *ScriptedDriver) QueueFork(steps ...ForkStep) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forkSteps = append(d.forkSteps, steps...)
}

// SetGate makes every later Fork call wait until gate is closed (or yields a value) before it
// answers. The wait ignores the call's context, like a provider that finishes its work after the
// caller hung up; a step's Func can watch the context itself.
func (d *ScriptedDriver) SetGate(gate <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gate = gate
}

// ForkEntered delivers the request of every Fork call as it starts (before any gate), so a test
// can wait until a fork is in flight. The buffer holds 1024 calls; later ones are not delivered.
func (d *ScriptedDriver) ForkEntered() <-chan forkengine.ForkRequest { return d.entered }

// DescribeCalls is the number of Describe calls so far.
func (d *ScriptedDriver) DescribeCalls() int { return int(d.describeCalls.Load()) }

// ProbeCalls is the number of probes asked so far, over all batches.
func (d *ScriptedDriver) ProbeCalls() int { return int(d.probeCalls.Load()) }

// ProbeBatches is the number of ProbeTurns calls so far.
func (d *ScriptedDriver) ProbeBatches() int { return int(d.probeBatches.Load()) }

// ForkCalls is the number of Fork calls so far.
func (d *ScriptedDriver) ForkCalls() int { return int(d.forkCalls.Load()) }

// ProbeRequests returns a copy of every ProbeTurns batch received, in call order.
func (d *ScriptedDriver) ProbeRequests() [][]forkengine.Probe {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.probes)
}

// ForkRequests returns a copy of every Fork request received, in call order.
func (d *ScriptedDriver) ForkRequests() []forkengine.ForkRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.forks)
}

// Describe answers with the session's scripted descriptor, else the default one.
func (d *ScriptedDriver) Describe(_ context.Context, s forkengine.Session) (forkengine.Descriptor, error) {
	d.describeCalls.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if a, ok := d.sessionDescriptor[s.ID]; ok {
		return a.desc, a.err
	}
	return d.descriptor, d.describeErr
}

// ProbeTurns answers each probe from the per-turn script, else the default answer.
func (d *ScriptedDriver) ProbeTurns(_ context.Context, probes []forkengine.Probe) ([]bool, error) {
	d.probeBatches.Add(1)
	d.probeCalls.Add(int64(len(probes)))
	d.mu.Lock()
	defer d.mu.Unlock()
	d.probes = append(d.probes, slices.Clone(probes))
	if d.probeErr != nil {
		return nil, d.probeErr
	}
	answers := make([]bool, len(probes))
	for i, p := range probes {
		answer, ok := d.turnProbe[p.Turn.ProviderTurnID]
		if !ok {
			answer = d.probeAnswer
		}
		answers[i] = answer
	}
	return answers, nil
}

// Fork takes the next scripted step (or the default acceptance), waits at the gate if one is set,
// and answers.
func (d *ScriptedDriver) Fork(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
	d.forkCalls.Add(1)
	d.mu.Lock()
	d.forks = append(d.forks, req)
	step, scripted := ForkStep{}, len(d.forkSteps) > 0
	if scripted {
		step, d.forkSteps = d.forkSteps[0], d.forkSteps[1:]
	}
	gate := d.gate
	d.mu.Unlock()
	select {
	case d.entered <- req:
	default:
	}
	if gate != nil {
		<-gate
	}
	switch {
	case step.Func != nil:
		return step.Func(ctx, req)
	case scripted:
		return step.Result, step.Err
	}
	return AcceptedResult(req), nil
}

// AcceptedResult is the valid acceptance of req for its descriptor's binding mode: child session
// "child-<operation id>"; in provider_owned mode one binding per provider-bound prefix turn
// (provider turn "child-<operation id>-<i>", i counting them from 1) and a receipt.
func AcceptedResult(req forkengine.ForkRequest) forkengine.ForkResult {
	res := forkengine.ForkResult{
		Disposition:       forkengine.DispositionAccepted,
		ProviderSessionID: "child-" + req.OperationID,
		StateBindingMode:  req.Descriptor.StateBindingMode,
	}
	if res.StateBindingMode != forkengine.BindingProviderOwned {
		return res
	}
	res.Receipt = "receipt-" + req.OperationID
	for i := 1; i <= req.BoundTurns; i++ {
		binding, _ := json.Marshal(map[string]any{"childTurn": i, "operation": req.OperationID})
		res.TurnBindings = append(res.TurnBindings, forkengine.TurnBinding{
			ProviderTurnID: fmt.Sprintf("child-%s-%d", req.OperationID, i), Binding: binding,
		})
	}
	return res
}
