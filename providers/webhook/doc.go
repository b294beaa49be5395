// Package webhook is a provider driver that forwards Describe, ProbeTurns and Fork to an external
// provider adapter over HTTP/JSON: POST {base}/describe, POST {base}/probe (the whole batch in one
// request) and POST {base}/fork. The protocol, with examples, is in docs/providers.md.
//
// The hard part of a remote fork is knowing whether the provider made a child when something goes
// wrong. The driver only reports not_started when it can prove no request reached the adapter (the
// request could not be built, or no request headers were ever written to a connection); any
// failure after that is unknown, because the adapter may have acted. The engine never re-dispatches
// an unknown fork, so this errs towards "no duplicate children".
package webhook
