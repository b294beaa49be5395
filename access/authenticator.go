package access

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// MaxTokenBytes bounds a presented credential: a longer one is refused before it is hashed or
// decoded (UNAUTHENTICATED, reason token_too_large). Identity providers' access tokens are a
// few kilobytes at most, groups and all.
const MaxTokenBytes = 16 << 10

// Authenticator turns what a client presents into a Principal: static tokens (-tokens, whose
// grant never changes, and a reloadable tokens file) and JWTs verified by a JWTVerifier. With
// none of them configured the server is open: every caller is OpenPrincipal. The zero value and
// nil are open.
type Authenticator struct {
	fixed *TokenSet
	file  *TokenFile
	jwt   *JWTVerifier
	now   func() time.Time
}

// AuthConfig is what NewAuthenticator combines; every field may be nil.
type AuthConfig struct {
	Tokens    *TokenSet    // -tokens
	TokenFile *TokenFile   // -tokens-file
	JWT       *JWTVerifier // -oidc-issuer / -jwks-url
	Now       func() time.Time
}

// NewAuthenticator returns the authenticator of cfg.
func NewAuthenticator(cfg AuthConfig) *Authenticator {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Authenticator{fixed: cfg.Tokens, file: cfg.TokenFile, jwt: cfg.JWT, now: now}
}

// Open reports whether no credentials are configured (development mode). A tokens file, even an
// empty one, is not open mode: it admits only the tokens it lists.
func (a *Authenticator) Open() bool {
	return a == nil || (a.fixed.Len() == 0 && a.file == nil && a.jwt == nil)
}

// Now is the authenticator's clock.
func (a *Authenticator) Now() time.Time {
	if a == nil || a.now == nil {
		return time.Now()
	}
	return a.now()
}

// authResult is what the edge learnt from a request's credential.
type authResult struct {
	presented bool
	principal Principal
	err       error
}

type authKey struct{}

// Authenticate resolves an "Authorization: Bearer <token>" value: a static token (by hash), else
// a JWT. Errors (*Error, UNAUTHENTICATED with a reason): credential_missing, unknown_token,
// token_too_large, and the JWT reasons of JWTVerifier.Verify.
func (a *Authenticator) Authenticate(ctx context.Context, authorization string) (Principal, error) {
	authorization = strings.TrimSpace(authorization)
	if authorization == "" {
		return Principal{}, errCredentialMissing
	}
	scheme, token, _ := strings.Cut(authorization, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return Principal{}, unauthenticated(ReasonCredentialMissing, "the Authorization header must be `Bearer <token>`")
	}
	token = strings.TrimSpace(token)
	if len(token) > MaxTokenBytes {
		return Principal{}, unauthenticated(ReasonTokenTooLarge, "the token is %d bytes; at most %d are read", len(token), MaxTokenBytes)
	}
	h := hashToken(token)
	if e, ok := a.fixed.lookup(h); ok {
		return e.principal(), nil
	}
	if a.file != nil {
		if e, ok := a.file.Tokens().lookup(h); ok {
			return e.principal(), nil
		}
	}
	if a.jwt != nil && strings.Count(token, ".") == 2 {
		return a.jwt.verify(ctx, token, h)
	}
	return Principal{}, unauthenticated(ReasonUnknownToken, "the bearer token is not one this server accepts")
}

var errCredentialMissing = unauthenticated(ReasonCredentialMissing, "a valid bearer token is required")

// HTTPMiddleware authenticates the request's Authorization header and records the outcome for
// Identify, the rate limit and the websocket's connection_init. It refuses nothing itself: the
// decision is made per root field, so errors come back as GraphQL errors with a code on every
// transport.
func (a *Authenticator) HTTPMiddleware(next http.Handler) http.Handler {
	if a.Open() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := authResult{presented: r.Header.Get("Authorization") != ""}
		if res.presented {
			res.principal, res.err = a.Authenticate(r.Context(), r.Header.Get("Authorization"))
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, res)))
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
// open mode it accepts anything. Otherwise a missing or refused credential is the *Error of
// Authenticate (the transport closes the connection with 4403); an accepted one is recorded in
// the connection's context for its operations, its rate limit and the end of its streams
// (Lifetime).
func (a *Authenticator) WebsocketInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	if a.Open() {
		return ctx, nil
	}
	res, _ := ctx.Value(authKey{}).(authResult) // from the upgrade request's header
	if authorization := payloadAuthorization(payload); authorization != "" {
		res = authResult{presented: true}
		res.principal, res.err = a.Authenticate(ctx, authorization)
	}
	switch {
	case !res.presented:
		return ctx, errCredentialMissing
	case res.err != nil:
		return ctx, res.err
	}
	if err := res.principal.ended(a.Now()); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, authKey{}, res), nil
}

// Identify returns the caller whose context ctx is: the Principal the edge made from its
// credential, OpenPrincipal in open mode. It is the one way the GraphQL layer learns who is
// asking. Errors (*Error, UNAUTHENTICATED): credential_missing, or the reason the credential was
// refused.
func (a *Authenticator) Identify(ctx context.Context) (Principal, error) {
	if a.Open() {
		return OpenPrincipal(), nil
	}
	res, ok := ctx.Value(authKey{}).(authResult)
	switch {
	case !ok || !res.presented:
		return Principal{}, errCredentialMissing
	case res.err != nil:
		return Principal{}, res.err
	}
	return res.principal, nil
}

// principalOf is the accepted credential's Principal in ctx; ok is false without one.
func principalOf(ctx context.Context) (Principal, bool) {
	res, ok := ctx.Value(authKey{}).(authResult)
	if !ok || !res.presented || res.err != nil {
		return Principal{}, false
	}
	return res.principal, true
}

// SubjectOf returns the subject of the accepted credential in ctx ("" without one), for logs
// and traces: who, never the token.
func SubjectOf(ctx context.Context) string {
	p, _ := principalOf(ctx)
	return p.Subject
}

// StreamLifetime is the lifetime of the credential a stream's context ctx carries
// (Principal.Lifetime): nil contexts when it has none that ends. The websocket and SSE
// transports end a stream with the context's cause (TOKEN_EXPIRED, TOKEN_REVOKED) when it ends.
func StreamLifetime(ctx context.Context) (context.Context, context.CancelFunc) {
	p, ok := principalOf(ctx)
	if !ok {
		return nil, nil
	}
	return p.Lifetime()
}
