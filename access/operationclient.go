package access

import (
	"context"
	"net/http"
)

// Per-client state that lives beyond one HTTP request (the APQ cache) needs to name the client
// of an operation from its context alone, where a websocket's operations find the credential
// its connection_init presented, not the upgrade request's. ContextClientKey is that name, the
// one place to change when identities change (a subject instead of a token).

type clientAddressKey struct{}

// RecordClientAddress records the address of r's client (ClientAddress) in its context for
// ContextClientKey; a websocket's operations keep it.
func (t TrustedProxies) RecordClientAddress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), clientAddressKey{}, t.ClientAddress(r))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// ContextClientKey names the client an operation runs for, as ClientKey names a request's:
// "token:<token>" for the valid API token of the credential in ctx (a websocket's, from its
// connection_init), else "addr:<address>" as RecordClientAddress recorded it, else "" (neither
// is known, as for an in-process request).
func ContextClientKey(ctx context.Context) string {
	if c, _ := ctx.Value(credentialKey{}).(credential); c.token != "" {
		return "token:" + c.token
	}
	if addr, _ := ctx.Value(clientAddressKey{}).(string); addr != "" {
		return "addr:" + addr
	}
	return ""
}
