// Package access is forkgraph's HTTP edge policy: everything decided about a request before it
// becomes a GraphQL operation, and the identity the GraphQL layer later asks about.
//
//   - Tokens: workspace-scoped API tokens (Authorization: Bearer, or a websocket's
//     connection_init payload) and the Authorize decision per workspace (UNAUTHENTICATED,
//     FORBIDDEN).
//   - RateLimit: a token bucket per valid token, else per client address (X-Forwarded-For only
//     from TrustedProxies): 429 RATE_LIMITED over HTTP, a RATE_LIMITED error per websocket
//     operation. TrustedProxies.ClientKey names a client the same way for the transports' own
//     per-client bounds (SSE single-connection reservations), and ContextClientKey names an
//     operation's client from its context for state kept per client (the APQ cache).
//   - Hosts and Origins: the Host allow-list against DNS rebinding (403 HOST_NOT_ALLOWED) and the
//     Origin allow-list for browsers, with CORS preflight (403 ORIGIN_NOT_ALLOWED).
//   - Request ids: X-Request-Id, logged beside internal errors.
//   - Request limits: LimitBody (413 REQUEST_TOO_LARGE) and LimitHeaders (431
//     REQUEST_HEADERS_TOO_LARGE); what net/http (CodeNetHTTPErrors, on the listener) and the
//     standard handlers (JSONErrors: ServeMux's 404 and 405) would answer in plain text is
//     answered as JSON with a code.
//
// Every refusal is a GraphQL-shaped JSON body whose error carries extensions.code
// (docs/security.md lists each limit, its default and its code). The package imports the
// standard library, golang.org/x/time/rate and forkengine's error codes only.
package access
