// Package access is forkgraph's HTTP edge policy: everything decided about a request before it
// becomes a GraphQL operation, and the identity the GraphQL layer later asks about.
//
//   - Identity: every credential becomes one Principal (subject, workspaces, scopes, expiry,
//     source) at the edge, from the Authorization header (HTTP, SSE) or a websocket's
//     connection_init payload. Authenticator combines static tokens (-tokens, and a TokenFile
//     reloaded on SIGHUP and whenever it changes) and JWTs (JWTVerifier: OIDC discovery or a
//     JWKS URL, keys cached by kid in a KeySet). Open mode, without credentials, is
//     OpenPrincipal. The GraphQL layer reads the principal through Authenticator.Identify only,
//     and asks Principal.Authorize per root field: UNAUTHENTICATED, FORBIDDEN (another
//     workspace), FORBIDDEN with reason missing_scope.
//   - Stream lifetimes: StreamLifetime is a context that ends when a stream's credential does (a
//     JWT's exp, a static token a reload removed), with TOKEN_EXPIRED or TOKEN_REVOKED as its
//     cause, which the transports end the stream with.
//   - RateLimit: a token bucket per subject (Principal.Key), else per client address
//     (X-Forwarded-For only from TrustedProxies): 429 RATE_LIMITED over HTTP, a RATE_LIMITED
//     error per websocket operation. TrustedProxies.ClientKey names a client the same way for
//     the transports' own per-client bounds (SSE single-connection reservations), and ContextClientKey names an
//     operation's client from its context for state kept per client (the APQ cache).
//   - Hosts and Origins: the Host allow-list against DNS rebinding (403 HOST_NOT_ALLOWED) and the
//     Origin allow-list for browsers, with CORS preflight (403 ORIGIN_NOT_ALLOWED).
//   - Request ids: X-Request-Id, logged beside internal errors.
//   - Request limits: LimitBody (413 REQUEST_TOO_LARGE) and LimitHeaders (431
//     REQUEST_HEADERS_TOO_LARGE); what net/http (CodeNetHTTPErrors, on the listener) and the
//     standard handlers (JSONErrors: ServeMux's 404 and 405) would answer in plain text is
//     answered as JSON with a code.
//
// Every refusal is a GraphQL-shaped JSON body or error whose extensions carry a code
// (docs/security.md lists each, with its default and its code). The package imports the standard
// library, golang.org/x/time/rate, go-jose (signatures, JWKS, JWT claims: no signature code is
// written here) and forkengine's error codes only.
package access
