package access

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Tokens maps API tokens to the one workspace each may read and change (SPEC §8). With no tokens
// the server is open: every workspace is reachable (development mode).
type Tokens map[string]string

// ParseTokens reads "tokenA=workspace1,tokenB=workspace2" (blank: none). A workspace id must be
// a valid id (forkengine.ValidateID): it is compared with the ids requests name, never trimmed.
func ParseTokens(spec string) (Tokens, error) {
	tokens := Tokens{}
	for _, pair := range strings.Split(spec, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		token, ws, ok := strings.Cut(pair, "=")
		token, ws = strings.TrimSpace(token), strings.TrimSpace(ws)
		if !ok || token == "" || ws == "" {
			return nil, fmt.Errorf("token entry %q: want token=workspace", pair)
		}
		if err := forkengine.ValidateID("workspace", ws); err != nil {
			return nil, fmt.Errorf("token entry %q: %w", pair, err)
		}
		tokens[token] = ws
	}
	return tokens, nil
}

// Open reports whether no tokens are configured.
func (t Tokens) Open() bool { return len(t) == 0 }

// credential is what a client presented: nothing, an unknown token, or a token of a workspace.
type credential struct {
	presented bool
	token     string // the valid token, "" when unknown
	workspace string // "" when the token is unknown
}

type credentialKey struct{}

// authenticate resolves an "Authorization: Bearer <token>" value.
func (t Tokens) authenticate(authorization string) credential {
	if strings.TrimSpace(authorization) == "" {
		return credential{}
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return credential{presented: true}
	}
	token = strings.TrimSpace(token)
	ws, ok := t[token]
	if !ok {
		return credential{presented: true}
	}
	return credential{presented: true, token: token, workspace: ws}
}

// HTTPMiddleware records the request's bearer token; the decision is made per root field by
// Authorize, so errors come back as GraphQL errors with a code.
func (t Tokens) HTTPMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := t.authenticate(r.Header.Get("Authorization"))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), credentialKey{}, c)))
	})
}

// payloadAuthorization reads {"authorization": "Bearer ..."} (either case) from a websocket's
// connection_init payload.
func payloadAuthorization(payload map[string]any) string {
	authorization, _ := payload["authorization"].(string)
	if authorization == "" {
		authorization, _ = payload["Authorization"].(string)
	}
	return authorization
}

// WebsocketInit authenticates a websocket's connection_init payload ({"authorization": "Bearer
// ..."}); a client that sends none may instead have sent the header on the upgrade request. In
// open mode it accepts anything; with tokens, a missing or unknown token is an *Error with code
// UNAUTHENTICATED (the transport closes the connection with 4403).
func (t Tokens) WebsocketInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	if t.Open() {
		return ctx, nil
	}
	c, _ := ctx.Value(credentialKey{}).(credential) // from the upgrade request's header
	if authorization := payloadAuthorization(payload); authorization != "" {
		c = t.authenticate(authorization)
	}
	if c.workspace == "" {
		return ctx, &Error{Code: string(forkengine.CodeUnauthenticated), Message: "a valid bearer token is required"}
	}
	return context.WithValue(ctx, credentialKey{}, c), nil
}

// Authorize decides whether the caller whose context ctx is may use workspace: always in open
// mode; with tokens only with a token of that workspace, and for the empty workspace (a root
// field that names none) with any valid token. Errors: UNAUTHENTICATED (no or unknown token),
// FORBIDDEN (a token of another workspace).
func (t Tokens) Authorize(ctx context.Context, workspace string) error {
	if t.Open() {
		return nil
	}
	c, _ := ctx.Value(credentialKey{}).(credential)
	if c.workspace == "" {
		return forkengine.Errorf(forkengine.CodeUnauthenticated, "a valid bearer token is required")
	}
	if workspace != "" && workspace != c.workspace { // "": any authenticated caller (resolvers.Authorizer)
		return forkengine.Errorf(forkengine.CodeForbidden, "this token cannot access workspace %s", workspace)
	}
	return nil
}
