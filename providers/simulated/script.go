package simulated

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Script is a session's scripted provider behaviour, read from settings.simulated.
type Script struct {
	// Fork is the disposition Fork answers with.
	Fork forkengine.Disposition
	// Error is the error text of a non-accepted outcome ("" means a default text).
	Error string
	// Latency is how long Fork waits before answering.
	Latency time.Duration
	// Probe says whether provider-bound, settled turns of the session are forkable.
	Probe bool
	// BindingMode is the state binding mode Describe reports and Fork answers with.
	BindingMode forkengine.BindingMode
	// Reconcile is what Reconcile answers for an unknown delivery: found (default: the child
	// the fork would have made), absent or unknown. A script whose fork is rejected or
	// not_started always reconciles absent (found would contradict it, and is refused).
	Reconcile forkengine.ReconcileAnswer
	// ReconcileAfter makes the first ReconcileAfter attempts answer unknown before Reconcile.
	ReconcileAfter int
	// Recover is what RecoverBinding answers for a turn whose binding was lost: found (default:
	// a provider turn derived from the proof), absent or ambiguous.
	Recover forkengine.RecoveryAnswer
	// Models are the models the provider offers a fork's target (ForkRequest.Target.Model); a
	// fork "with another model" it does not offer is rejected. Empty: any model.
	Models []string
}

// scriptJSON is the wire shape; pointers tell "absent" from a zero value.
type scriptJSON struct {
	Fork           string   `json:"fork"`
	Error          string   `json:"error"`
	LatencyMs      *int64   `json:"latencyMs"`
	Probe          *bool    `json:"probe"`
	BindingMode    string   `json:"bindingMode"`
	Reconcile      string   `json:"reconcile"`
	ReconcileAfter *int     `json:"reconcileAfter"`
	Recover        string   `json:"recover"`
	Models         []string `json:"models"`
}

// ScriptFor reads the script of a session, filling defaults for absent keys. It returns an error
// when the settings or the script are malformed or name an unknown outcome or mode, so a typo is
// loud instead of silently meaning "accepted".
func ScriptFor(s forkengine.Session, defaultLatency time.Duration) (Script, error) {
	script := Script{
		Fork:        forkengine.DispositionAccepted,
		Latency:     defaultLatency,
		Probe:       true,
		BindingMode: forkengine.BindingHostCopy,
		Reconcile:   forkengine.ReconcileFound,
		Recover:     forkengine.RecoveryFound,
	}
	raw, err := simulatedSettings(s.Settings)
	if err != nil || raw == nil {
		return script, err
	}
	var in scriptJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		return script, fmt.Errorf("session %s: settings.simulated: %w", s.ID, err)
	}
	if err := script.apply(in); err != nil {
		return script, fmt.Errorf("session %s: settings.simulated: %w", s.ID, err)
	}
	return script, nil
}

// simulatedSettings returns the raw settings.simulated value, or nil when it is absent or null.
func simulatedSettings(settings json.RawMessage) (json.RawMessage, error) {
	if len(settings) == 0 {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(settings, &obj); err != nil {
		return nil, fmt.Errorf("settings are not a JSON object: %w", err)
	}
	raw := obj["simulated"]
	if string(raw) == "null" {
		return nil, nil
	}
	return raw, nil
}

// apply overlays the present keys of in onto the defaults.
func (s *Script) apply(in scriptJSON) error {
	switch d := forkengine.Disposition(in.Fork); d {
	case "":
	case forkengine.DispositionAccepted, forkengine.DispositionRejected,
		forkengine.DispositionNotStarted, forkengine.DispositionUnknown:
		s.Fork = d
	default:
		return fmt.Errorf("unknown fork outcome %q", in.Fork)
	}
	if m := forkengine.BindingMode(in.BindingMode); m != "" {
		if !m.Valid() {
			return fmt.Errorf("unknown bindingMode %q", in.BindingMode)
		}
		s.BindingMode = m
	}
	if in.LatencyMs != nil {
		if *in.LatencyMs < 0 {
			return fmt.Errorf("latencyMs %d is negative", *in.LatencyMs)
		}
		s.Latency = time.Duration(*in.LatencyMs) * time.Millisecond
	}
	if in.Probe != nil {
		s.Probe = *in.Probe
	}
	s.Models = in.Models
	switch a := forkengine.ReconcileAnswer(in.Reconcile); a {
	case "":
	case forkengine.ReconcileFound, forkengine.ReconcileAbsent, forkengine.ReconcileUnknown:
		s.Reconcile = a
	default:
		return fmt.Errorf("unknown reconcile answer %q (want found, absent or unknown)", in.Reconcile)
	}
	switch a := forkengine.RecoveryAnswer(in.Recover); a {
	case "":
	case forkengine.RecoveryFound, forkengine.RecoveryAbsent, forkengine.RecoveryAmbiguous:
		s.Recover = a
	default:
		return fmt.Errorf("unknown recover answer %q (want found, absent or ambiguous)", in.Recover)
	}
	if in.ReconcileAfter != nil {
		if *in.ReconcileAfter < 0 {
			return fmt.Errorf("reconcileAfter %d is negative", *in.ReconcileAfter)
		}
		s.ReconcileAfter = *in.ReconcileAfter
	}
	if s.refusesFork() && s.Reconcile == forkengine.ReconcileFound && in.Reconcile != "" {
		return fmt.Errorf("reconcile %q contradicts fork %q: a provider that refused a fork has no child to find", in.Reconcile, s.Fork)
	}
	s.Error = in.Error
	return nil
}

// refusesFork reports whether the script's fork outcome says no child is ever made.
func (s Script) refusesFork() bool {
	return s.Fork == forkengine.DispositionRejected || s.Fork == forkengine.DispositionNotStarted
}

// errorText is the error a non-accepted outcome reports.
func (s Script) errorText() string {
	if s.Error != "" {
		return s.Error
	}
	switch s.Fork {
	case forkengine.DispositionRejected:
		return "simulated provider rejected the fork"
	case forkengine.DispositionNotStarted:
		return "simulated provider did not start the fork"
	case forkengine.DispositionUnknown:
		return "simulated provider fork delivery is unknown"
	}
	return ""
}
