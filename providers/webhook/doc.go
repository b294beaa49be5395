// Package webhook is a provider driver that forwards Describe, ProbeTurns, Fork and Reconcile to an
// external provider adapter over HTTP/JSON: POST {base}/describe, POST {base}/probe (the whole
// batch in one request, or several when it is larger than Options.MaxProbeRequestBytes),
// POST {base}/fork and POST {base}/reconcile. The protocol, with examples, is in
// docs/providers.md; examples/provider-adapter is a reference adapter.
//
// The hard part of a remote fork is knowing whether the provider made a child when something goes
// wrong. The driver only reports not_started when it can prove no request reached the adapter (the
// request could not be built, or no request headers were ever written to a connection); any
// failure after that is unknown, because the adapter may have acted. The engine never re-dispatches
// an unknown fork; when the adapter's descriptor says reconcile, it asks /reconcile instead, and
// only the adapter's explicit found or absent ends the doubt, so this errs towards "no duplicate
// children".
//
// An adapter that cannot be reached (or answers 5xx) while a fork is requested makes Describe and
// ProbeTurns fail with an error wrapping forkengine.ErrProviderUnavailable: the client may retry.
package webhook
