package access

import "net/http"

// Edge is the HTTP edge policy in front of /graphql: which hosts and browser origins are
// served, whose X-Forwarded-For is believed, who the caller is, how fast each subject may send
// and how large a body may be. docs/security.md describes each part.
type Edge struct {
	Hosts   Hosts
	Origins Origins
	Proxies TrustedProxies
	Authn   *Authenticator
	// PerSecond and Burst rate-limit each subject; in open mode (Authn.Open) nothing is
	// limited, so local tools, tests and benchmarks run unthrottled.
	PerSecond float64
	Burst     int
	MaxBody   int64 // largest request body: 413 beyond it
	// Observe wraps the handler inside the request id and outside every refusal (the request log
	// and metrics), so each refusal of the edge is logged and counted as a /graphql response; nil:
	// nothing observes.
	Observe func(http.Handler) http.Handler
}

// Handler wraps next in the edge policy, outermost first: request id, Observe, header size
// (431), Host (403), origin (CORS, 403), credential (401/403), rate limit per subject (429, so
// after the credential), body limit (413), client address (for per-client state such as APQ).
func (e Edge) Handler(next http.Handler) http.Handler {
	limit := NewRateLimit(e.Proxies, e.PerSecond, e.Burst)
	if e.Authn.Open() {
		limit = nil // a nil limit lets every request through
	}
	observe := e.Observe
	if observe == nil {
		observe = func(h http.Handler) http.Handler { return h }
	}
	return RequestIDs(observe(LimitHeaders(MaxHeaderBytes, e.Hosts.Middleware(
		e.Origins.Middleware(e.Authn.HTTPMiddleware(limit.HTTPMiddleware(LimitBody(e.MaxBody,
			e.Proxies.RecordClientAddress(next)))))))))
}
