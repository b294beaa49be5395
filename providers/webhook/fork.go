package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Fork sends the fork to the adapter and maps what happened to a delivery disposition:
//
//   - request never sent (bad URL, DNS failure, connection refused): not_started;
//   - sent, then timeout, lost connection, oversized or undecodable body: unknown;
//   - 2xx: the body's disposition (missing or unrecognised: unknown);
//   - non-2xx whose body says rejected, not_started, unsupported or unknown: that;
//   - other 4xx with an "error" text in the body: rejected (the adapter refused it);
//   - any other non-2xx (5xx, 3xx, 4xx without an error body): unknown.
//
// ForkResult.Error is what users read on the operation: the adapter's explanation, or a fixed
// text saying what went wrong, never where (reply.clientText). The returned error is non-nil when
// the transport or the body failed, and wraps the cause, adapter URL included, for the server
// log; beside not_started it only explains, the disposition stands.
// The request carries the operation id in a Forkgraph-Operation-Id header, so an adapter can
// recognise a repeated delivery. It is deliberately not called Idempotency-Key: Go's HTTP client
// treats a POST with that header as replayable and silently resends it when a reused connection
// fails, which could deliver one fork twice.
func (d *Driver) Fork(ctx context.Context, req forkengine.ForkRequest) (forkengine.ForkResult, error) {
	r, err := d.post(ctx, "/fork", toWireFork(req), map[string]string{operationHeader: req.OperationID})
	switch {
	case err != nil && !r.sent:
		return failed(forkengine.DispositionNotStarted, "fork request was not sent: "+r.clientText(err)),
			fmt.Errorf("webhook fork %s: %w", req.OperationID, err)
	case err != nil:
		return failed(forkengine.DispositionUnknown, "fork delivery is unknown: "+r.clientText(err)),
			fmt.Errorf("webhook fork %s: %w", req.OperationID, err)
	case r.ok():
		return decodeAccepted(r, req.OperationID)
	default:
		return decodeRefusal(r), nil
	}
}

// operationHeader names the operation on every /fork request.
const operationHeader = "Forkgraph-Operation-Id"

// failed builds a non-accepted result; an adapter that gave no reason gets a generic one, since an
// operation's error is what a user reads to learn why the fork did not happen.
func failed(d forkengine.Disposition, text string) forkengine.ForkResult {
	if text == "" {
		text = fmt.Sprintf("provider adapter reported %s", d)
	}
	return forkengine.ForkResult{Disposition: d, Error: text}
}

// decodeAccepted maps a 2xx answer. Its body is the adapter's own account of what happened.
func decodeAccepted(r reply, operationID string) (forkengine.ForkResult, error) {
	var out forkResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		return failed(forkengine.DispositionUnknown, "fork response could not be decoded"),
			fmt.Errorf("webhook fork %s: decode response: %w", operationID, err)
	}
	disposition, known := parseDisposition(out.Disposition)
	if !known {
		text := fmt.Sprintf("fork response has no valid disposition (%q)", out.Disposition)
		if out.Error != "" {
			text += ": " + out.Error
		}
		return failed(forkengine.DispositionUnknown, text), nil
	}
	if disposition != forkengine.DispositionAccepted {
		return failed(disposition, out.Error), nil
	}
	mode := forkengine.BindingMode(out.StateBindingMode)
	if mode == "" {
		mode = forkengine.BindingHostCopy // the protocol's default, as for descriptors
	}
	return forkengine.ForkResult{
		Disposition:       forkengine.DispositionAccepted,
		ProviderSessionID: out.ProviderSessionID,
		StateBindingMode:  mode,
		TurnBindings:      out.TurnBindings,
		Receipt:           out.Receipt,
		Error:             out.Error,
	}, nil
}

// decodeRefusal maps a non-2xx answer. Only an explicit statement in the body, or a 4xx that
// explains itself, counts as a refusal; anything else may come from a proxy or a crashed adapter
// that had already acted, so it is unknown.
func decodeRefusal(r reply) forkengine.ForkResult {
	var out forkResponse
	decoded := json.Unmarshal(r.body, &out) == nil
	text := fmt.Sprintf("adapter answered HTTP %d", r.status)
	if decoded && out.Error != "" {
		text += ": " + out.Error
	}
	if decoded {
		switch d, _ := parseDisposition(out.Disposition); d {
		case forkengine.DispositionRejected, forkengine.DispositionNotStarted,
			forkengine.DispositionUnsupported, forkengine.DispositionUnknown:
			return failed(d, text)
		case forkengine.DispositionAccepted:
			return failed(forkengine.DispositionUnknown, text+" (an error status claiming acceptance)")
		}
	}
	if decoded && out.Error != "" && r.status >= 400 && r.status < 500 {
		return failed(forkengine.DispositionRejected, text)
	}
	return failed(forkengine.DispositionUnknown, text)
}

// parseDisposition recognises the protocol's disposition strings.
func parseDisposition(s string) (forkengine.Disposition, bool) {
	switch d := forkengine.Disposition(s); d {
	case forkengine.DispositionAccepted, forkengine.DispositionRejected, forkengine.DispositionNotStarted,
		forkengine.DispositionUnsupported, forkengine.DispositionUnknown:
		return d, true
	}
	return "", false
}
