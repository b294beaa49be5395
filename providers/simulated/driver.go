package simulated

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Kind is the driver kind the simulated driver reports in its descriptor.
const Kind = "simulated"

// DefaultVersion is the driver version reported when Options.Version is empty.
const DefaultVersion = "v1"

// Options configures a Driver. The zero value is a zero-latency driver at version "v1".
type Options struct {
	// Latency is how long Fork takes for sessions whose script sets no latencyMs.
	Latency time.Duration
	// Version is the driver version in the descriptor (default "v1"). Changing it between a
	// fork's start and its dispatch is driver drift, which the engine fails without calling Fork.
	Version string
}

// Driver is the simulated provider. It is safe for concurrent use and keeps no per-session state:
// every answer follows from the session's script and the request.
type Driver struct {
	opts          Options
	forkCalls     atomic.Int64
	probeCalls    atomic.Int64
	describeCalls atomic.Int64
	// reconcileCalls counts Reconcile calls, recoverCalls RecoverBinding calls.
	reconcileCalls atomic.Int64
	recoverCalls   atomic.Int64
}

var (
	_ forkengine.Driver           = (*Driver)(nil)
	_ forkengine.Reconciler       = (*Driver)(nil)
	_ forkengine.SessionValidator = (*Driver)(nil)
	_ forkengine.BindingRecoverer = (*Driver)(nil)
)

// New returns a simulated driver.
func New(opts Options) *Driver {
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	return &Driver{opts: opts}
}

// ForkCalls returns how many times Fork has been called.
func (d *Driver) ForkCalls() int64 { return d.forkCalls.Load() }

// ProbeCalls returns how many times ProbeTurns has been called (one per batch).
func (d *Driver) ProbeCalls() int64 { return d.probeCalls.Load() }

// DescribeCalls returns how many times Describe has been called.
func (d *Driver) DescribeCalls() int64 { return d.describeCalls.Load() }

// Describe reports kind "simulated", the configured version and the script's binding mode, with
// through-turn forks supported and full-session forks not. A malformed script is an error, which
// the engine treats as unsupported.
func (d *Driver) Describe(_ context.Context, s forkengine.Session) (forkengine.Descriptor, error) {
	d.describeCalls.Add(1)
	script, err := ScriptFor(s, d.opts.Latency)
	if err != nil {
		return forkengine.Descriptor{}, fmt.Errorf("simulated describe: %w", err)
	}
	return forkengine.Descriptor{
		Kind:             Kind,
		Version:          d.opts.Version,
		StateBindingMode: script.BindingMode,
		ThroughTurn:      true,
		FullSession:      false,
		Reconcile:        true,
		RecoverBinding:   true,
	}, nil
}

// RecoverBinding answers what the script says the provider's history holds for a turn whose
// binding was lost: found (the default) names a provider turn derived from the session's provider
// session and the proof, so one proof always finds the same turn (and two turns with one proof
// find the same one, which the engine refuses for the second); absent or ambiguous find nothing.
func (d *Driver) RecoverBinding(_ context.Context, req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
	d.recoverCalls.Add(1)
	script, err := ScriptFor(req.Session, d.opts.Latency)
	if err != nil {
		return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryAbsent, Error: err.Error()}, nil
	}
	switch script.Recover {
	case forkengine.RecoveryAbsent:
		return forkengine.BindingRecoveryResult{Answer: script.Recover, Error: "simulated provider has no turn with this proof"}, nil
	case forkengine.RecoveryAmbiguous:
		return forkengine.BindingRecoveryResult{Answer: script.Recover, Error: "simulated provider has several turns with this proof"}, nil
	}
	proof := req.Proof.ClientSubmitID
	if proof == "" {
		proof = "text:" + req.Proof.TextDigest
	}
	psid := req.Session.ProviderSessionID
	turnID := "simturn-rec-" + digest(req.WorkspaceID, psid, proof)
	binding, _ := json.Marshal(map[string]any{"simulated": map[string]any{ // strings and a bool always marshal
		"providerSessionId": psid, "recovered": true,
	}})
	return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryFound, ProviderSessionID: psid,
		ProviderTurnID: turnID, ProviderTurnBinding: binding}, nil
}

// RecoverCalls returns how many times RecoverBinding has been called.
func (d *Driver) RecoverCalls() int64 { return d.recoverCalls.Load() }

// Reconcile answers what the script says became of an unknown delivery: unknown for the first
// reconcileAfter attempts, then reconcile (default found, with the very child Fork would have
// made, derived from the operation). It never makes a child of its own, and never contradicts
// the fork's scripted outcome: for a fork the script refuses (rejected, not_started) no child
// exists, so after the unknown attempts the answer is absent, whatever reconcile says (a
// delivery can become unknown even then, when the refusal was lost with the process that
// received it).
func (d *Driver) Reconcile(_ context.Context, req forkengine.ReconcileRequest) (forkengine.ReconcileResult, error) {
	d.reconcileCalls.Add(1)
	script, err := ScriptFor(req.Source, d.opts.Latency)
	if err != nil {
		return forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown, Error: err.Error()}, nil
	}
	answer := script.Reconcile
	if script.refusesFork() {
		answer = forkengine.ReconcileAbsent
	}
	if req.Attempt <= script.ReconcileAfter {
		answer = forkengine.ReconcileUnknown
	}
	switch answer {
	case forkengine.ReconcileFound:
		child := accepted(req.ForkRequest, script)
		return forkengine.ReconcileResult{Answer: answer, ProviderSessionID: child.ProviderSessionID,
			StateBindingMode: child.StateBindingMode, TurnBindings: child.TurnBindings, Receipt: child.Receipt}, nil
	case forkengine.ReconcileAbsent:
		return forkengine.ReconcileResult{Answer: answer, Error: "simulated provider has no child for this request"}, nil
	}
	return forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown, Error: "simulated provider cannot tell yet"}, nil
}

// ReconcileCalls returns how many times Reconcile has been called.
func (d *Driver) ReconcileCalls() int64 { return d.reconcileCalls.Load() }

// ReasonInvalidScript is the BAD_USER_INPUT reason of a malformed settings.simulated script.
const ReasonInvalidScript = "invalid_simulated_script"

// ValidateSession refuses a session whose settings.simulated script is malformed when it is
// reported (BAD_USER_INPUT, reason invalid_simulated_script), instead of the fork failing later.
func (d *Driver) ValidateSession(s forkengine.Session) error {
	if _, err := ScriptFor(s, d.opts.Latency); err != nil {
		return forkengine.ReasonErrorf(forkengine.CodeInvalid, ReasonInvalidScript, "%v", err)
	}
	return nil
}

// ProbeTurns answers the whole batch in one call: a turn is forkable when it is settled, has a
// provider binding, and its session's script does not say probe=false (a malformed script also
// says no). It never returns an error.
func (d *Driver) ProbeTurns(_ context.Context, probes []forkengine.Probe) ([]bool, error) {
	d.probeCalls.Add(1)
	answers := make([]bool, len(probes))
	for i, p := range probes {
		script, err := ScriptFor(p.Session, d.opts.Latency)
		answers[i] = err == nil && script.Probe && p.Turn.Settled() && p.Turn.HasProviderBinding()
	}
	return answers, nil
}

// Fork waits the script's latency, then answers with the scripted disposition. If ctx ends while
// waiting, the request counts as sent but unanswered: disposition unknown and ctx's error. A
// malformed script answers not_started, since a real provider would never have been called.
func (d *Driver) Fork(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
	d.forkCalls.Add(1)
	script, err := ScriptFor(req.Source, d.opts.Latency)
	if err != nil {
		return forkengine.ForkResult{Disposition: forkengine.DispositionNotStarted, Error: err.Error()}, nil
	}
	if err := wait(ctx, script.Latency); err != nil {
		return forkengine.ForkResult{
			Disposition: forkengine.DispositionUnknown,
			Error:       "simulated provider did not answer before the deadline",
		}, fmt.Errorf("simulated fork %s: %w", req.OperationID, err)
	}
	if script.Fork != forkengine.DispositionAccepted {
		return forkengine.ForkResult{Disposition: script.Fork, Error: script.errorText()}, nil
	}
	if len(script.Models) > 0 && !slices.Contains(script.Models, req.Target.Model) {
		return forkengine.ForkResult{Disposition: forkengine.DispositionRejected,
			Error: fmt.Sprintf("simulated provider does not offer model %q", req.Target.Model)}, nil
	}
	return accepted(req, script), nil
}

// wait sleeps for latency unless ctx ends first.
func wait(ctx context.Context, latency time.Duration) error {
	if latency <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(latency)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// accepted builds the child the simulated provider "made". In provider_owned mode the provider
// returns its own handle for every provider-bound turn of the prefix, as a real provider that
// makes the child independently resumable would.
func accepted(req forkengine.ForkRequest, script Script) forkengine.ForkResult {
	res := forkengine.ForkResult{
		Disposition:       forkengine.DispositionAccepted,
		ProviderSessionID: childSessionID(req),
		StateBindingMode:  script.BindingMode,
		Error:             script.Error, // an accepted answer with an error is unverifiable; kept for tests
	}
	if script.BindingMode != forkengine.BindingProviderOwned {
		return res
	}
	for i := 1; i <= req.BoundTurns; i++ {
		n := strconv.Itoa(i)
		res.TurnBindings = append(res.TurnBindings, forkengine.TurnBinding{
			ProviderTurnID: "simturn-" + digest(req.WorkspaceID, req.OperationID, n),
			Binding:        turnBinding(res.ProviderSessionID, n),
		})
	}
	res.Receipt = "simreceipt-" + digest(req.WorkspaceID, req.OperationID, "receipt")
	return res
}

// childSessionID is derived from (workspace, operation id) only, so a replay of one operation names
// the same child. A source whose id happens to equal it gets a salted variant instead, since a
// child must never share its source's identity.
func childSessionID(req forkengine.ForkRequest) string {
	id := "simsession-" + digest(req.WorkspaceID, req.OperationID)
	if id == req.Source.ProviderSessionID {
		id = "simsession-" + digest(req.WorkspaceID, req.OperationID, "salt")
	}
	return id
}

// turnBinding is the opaque JSON object the simulated provider keeps for a child turn.
func turnBinding(childSessionID, boundTurn string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{ // a map of strings always marshals
		"simulated": map[string]string{
			"providerSessionId": childSessionID,
			"boundTurn":         boundTurn,
		},
	})
	return b
}

// digest hashes its parts with separators, so ("ab","c") and ("a","bc") differ.
func digest(parts ...string) string {
	h := sha256.New()
	h.Write([]byte("forkgraph/simulated/v1"))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}
