package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

var _ forkengine.Reconciler = (*Driver)(nil)

// Reconcile asks the adapter what became of the fork of req.OperationID (POST /reconcile, with
// what /fork sent plus the attempt number, and the same Forkgraph-Operation-Id header). It never
// calls /fork. Only a 2xx answer whose body decodes and says "found" or "absent" is taken as such;
// everything else is unknown, so a proxy's page, a crashed adapter or a half-read body can never
// commit a fork or release its boundary by accident:
//
//   - 2xx {"answer":"found", ...}: found, with the child fields of an accepted fork (a missing
//     stateBindingMode means host_copy), which the engine validates like a fork result;
//   - 2xx {"answer":"absent"}: absent; the adapter guarantees no child exists or will appear;
//   - 2xx {"answer":"unknown"}: unknown, with a nil error (the adapter answered: it cannot tell);
//   - a transport failure or timeout, any non-2xx, an undecodable or oversized body, or an
//     unrecognised answer: unknown, with a non-nil error saying why. A transport failure or a
//     5xx wraps forkengine.ErrProviderUnavailable.
func (d *Driver) Reconcile(ctx context.Context, req forkengine.ReconcileRequest) (forkengine.ReconcileResult, error) {
	body := reconcileRequest{forkRequest: toWireFork(req.ForkRequest), Attempt: req.Attempt}
	r, err := d.post(ctx, "/reconcile", body, map[string]string{operationHeader: req.OperationID})
	if err == nil && !r.ok() {
		err = r.statusError("/reconcile")
	}
	if err != nil {
		text := r.clientText(err) // the answer's Error is shown; err, naming the adapter's URL, is logged
		return unknownAnswer(text), fmt.Errorf("webhook reconcile %s: %w", req.OperationID, r.availability(err))
	}
	var out reconcileResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		return unknownAnswer("the provider adapter's reconcile answer could not be decoded"),
			fmt.Errorf("webhook reconcile %s: decode response: %w", req.OperationID, err)
	}
	switch forkengine.ReconcileAnswer(out.Answer) {
	case forkengine.ReconcileFound:
		return found(out), nil
	case forkengine.ReconcileAbsent:
		return forkengine.ReconcileResult{Answer: forkengine.ReconcileAbsent, Error: out.Error}, nil
	case forkengine.ReconcileUnknown:
		if out.Error == "" {
			out.Error = "provider adapter cannot tell yet"
		}
		return unknownAnswer(out.Error), nil
	}
	err = fmt.Errorf("webhook reconcile %s: response has no valid answer (%q)", req.OperationID, out.Answer)
	return unknownAnswer(fmt.Sprintf("the provider adapter's reconcile answer %q is not found, absent or unknown", out.Answer)), err
}

func found(out reconcileResponse) forkengine.ReconcileResult {
	mode := forkengine.BindingMode(out.StateBindingMode)
	if mode == "" {
		mode = forkengine.BindingHostCopy // the protocol's default, as for /fork
	}
	return forkengine.ReconcileResult{
		Answer:            forkengine.ReconcileFound,
		ProviderSessionID: out.ProviderSessionID,
		StateBindingMode:  mode,
		TurnBindings:      out.TurnBindings,
		Receipt:           out.Receipt,
		Error:             out.Error,
	}
}

func unknownAnswer(text string) forkengine.ReconcileResult {
	return forkengine.ReconcileResult{Answer: forkengine.ReconcileUnknown, Error: text}
}
