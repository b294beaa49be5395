package access

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Origins is the Origin allow-list for browsers on other origins, used alike by CORS, SSE and the
// websocket upgrade. The server's own origin (an Origin whose host is the request's Host, which
// Hosts has already checked) is always allowed, and requests without an Origin (curl, Node, Go
// clients) are not browser requests and pass. Entries are exact origins, scheme://host[:port];
// "*" allows every origin (for development only).
type Origins struct {
	any     bool
	origins map[string]bool
}

// ParseOrigins reads a comma-separated list of origins.
func ParseOrigins(spec string) (Origins, error) {
	o := Origins{origins: map[string]bool{}}
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		switch {
		case entry == "":
			continue
		case entry == "*":
			o.any = true
			continue
		}
		u, err := url.Parse(entry)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.User != nil {
			return Origins{}, fmt.Errorf("CORS origin %q: want scheme://host[:port], e.g. https://app.example.com", entry)
		}
		o.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return o, nil
}

// Allows reports whether r may be answered to the browser page that sent it.
func (o Origins) Allows(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if o.any || o.origins[strings.ToLower(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// corsHeaders are the request headers a cross-origin page may send.
// X-GraphQL-Event-Stream-Token is graphql-sse's single-connection reservation token.
const corsHeaders = "Accept, Authorization, Content-Type, X-GraphQL-Event-Stream-Token, X-Request-Id"

// Middleware refuses a browser request from an origin not on the list with 403
// ORIGIN_NOT_ALLOWED, preflight included, so such a page can neither read responses nor open a
// websocket; it answers an allowed origin's preflight (OPTIONS with
// Access-Control-Request-Method) with 204 and the CORS headers, and adds
// Access-Control-Allow-Origin to its other responses. Tokens travel in the Authorization header,
// never in cookies, so credentials are not allowed.
func (o Origins) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" {
			w.Header().Add("Vary", "Origin")
		}
		if !o.Allows(r) {
			writeError(w, http.StatusForbidden, &Error{Code: CodeOriginNotAllowed, Message: fmt.Sprintf(
				"origin %q may not use this server; add it to -cors-origins (FORKGRAPH_CORS_ORIGINS)", origin)})
			return
		}
		if origin != "" {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Expose-Headers", "Retry-After, X-Request-Id")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
			headers := r.Header.Get("Access-Control-Request-Headers")
			if headers == "" {
				headers = corsHeaders
			}
			w.Header().Set("Access-Control-Allow-Headers", headers) // the origin is trusted
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
