package resolvers

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Tokens maps API tokens to the one workspace each may read and change (SPEC §8). With no tokens
// the server is open: every workspace is reachable (development mode).
type Tokens map[string]string

// ParseTokens reads "tokenA=workspace1,tokenB=workspace2" (blank: none).
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
		tokens[token] = ws
	}
	return tokens, nil
}

// Open reports whether no tokens are configured.
func (t Tokens) Open() bool { return len(t) == 0 }

// credential is what a client presented: nothing, an unknown token, or a token of a workspace.
type credential struct {
	presented bool
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
	return credential{presented: true, workspace: t[strings.TrimSpace(token)]}
}

// HTTPMiddleware records the request's bearer token; the decision is made per root field by
// authorizeRootField, so errors come back as GraphQL errors with a code.
func (t Tokens) HTTPMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := t.authenticate(r.Header.Get("Authorization"))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), credentialKey{}, c)))
	})
}

// WebsocketInit authenticates a websocket's connection_init payload ({"authorization": "Bearer
// ..."}); a client that sends none may instead have sent the header on the upgrade request. In
// open mode it accepts anything; with tokens, a missing or unknown token rejects the connection
// (the transport closes it with 4403).
func (t Tokens) WebsocketInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	if t.Open() {
		return ctx, nil
	}
	authorization, _ := payload["authorization"].(string)
	if authorization == "" {
		authorization, _ = payload["Authorization"].(string)
	}
	c, _ := ctx.Value(credentialKey{}).(credential) // from the upgrade request's header
	if authorization != "" {
		c = t.authenticate(authorization)
	}
	if c.workspace == "" {
		return ctx, forkengine.Errorf(forkengine.CodeUnauthenticated, "a valid bearer token is required")
	}
	return context.WithValue(ctx, credentialKey{}, c), nil
}

// authorizeRootField (srv.AroundFields) is the one place workspace access is decided: every root
// field names a workspace (an argument or its input's), and the caller's token must be for it.
// Errors: UNAUTHENTICATED (no or unknown token), FORBIDDEN (another workspace).
// The workspace id itself is checked here too, in open mode as well, so a blank or malformed one
// is BAD_USER_INPUT for reads exactly as for writes.
func (t Tokens) authorizeRootField(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !isRootObject(fc.Object) || strings.HasPrefix(fc.Field.Name, "__") {
		return next(ctx)
	}
	ws, ok := workspaceArgument(fc.Args)
	if !ok {
		return nil, fmt.Errorf("root field %s names no workspace", fc.Field.Name)
	}
	if err := forkengine.ValidateID("workspaceId", ws); err != nil {
		return nil, err
	}
	if t.Open() {
		return next(ctx)
	}
	c, _ := ctx.Value(credentialKey{}).(credential)
	if c.workspace == "" {
		return nil, forkengine.Errorf(forkengine.CodeUnauthenticated, "a valid bearer token is required")
	}
	if ws != c.workspace {
		return nil, forkengine.Errorf(forkengine.CodeForbidden, "this token cannot access workspace %s", ws)
	}
	return next(ctx)
}

func isRootObject(name string) bool {
	return name == "Query" || name == "Mutation" || name == "Subscription"
}

// workspaceArgument finds the workspace a root field names: a workspaceId argument, or the
// Workspace() of its input.
func workspaceArgument(args map[string]any) (string, bool) {
	if ws, ok := args["workspaceId"].(string); ok {
		return ws, true
	}
	if in, ok := args["input"].(interface{ Workspace() string }); ok {
		return in.Workspace(), true
	}
	return "", false
}
