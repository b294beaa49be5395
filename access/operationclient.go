package access

import (
	"context"
	"net/http"
)

// Per-client state that lives beyond one HTTP request (the APQ cache) needs to name the client
// of an operation from its context alone, where a websocket's operations find the principal its
// connection_init presented, not the upgrade request's. ContextClientKey is that name.

type clientAddressKey struct{}

// RecordClientAddress records the address of r's client (ClientAddress) in its context for
// ContextClientKey; a websocket's operations keep it.
func (t TrustedProxies) RecordClientAddress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), clientAddressKey{}, t.ClientAddress(r))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// ContextClientKey names the client an operation runs for, as the rate limit names it:
// "subject:<Principal.Key>" for the accepted credential in ctx (a websocket's, from its
// connection_init), else "addr:<address>" as RecordClientAddress recorded it, else "" (neither
// is known, as for an in-process request).
func ContextClientKey(ctx context.Context) string {
	if p, ok := principalOf(ctx); ok && p.Key() != "" {
		return "subject:" + p.Key()
	}
	if addr, _ := ctx.Value(clientAddressKey{}).(string); addr != "" {
		return "addr:" + addr
	}
	return ""
}
