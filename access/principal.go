package access

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Source names the kind of credential a Principal was made from.
type Source string

// The credential kinds.
const (
	SourceOpen  Source = "open"  // no credentials configured: development mode on loopback
	SourceToken Source = "token" // a static token (-tokens or -tokens-file)
	SourceJWT   Source = "jwt"   // a JWT verified against the issuer's keys
)

// Reasons of UNAUTHENTICATED and FORBIDDEN refusals (extensions.reason).
const (
	ReasonCredentialMissing  = "credential_missing"       // no Authorization: Bearer, no connection_init token
	ReasonUnknownToken       = "unknown_token"            // neither a static token nor a JWT this server accepts
	ReasonTokenTooLarge      = "token_too_large"          // longer than MaxTokenBytes, refused unread
	ReasonInvalidToken       = "invalid_token"            // not a JWS, or signed with an algorithm not allowed
	ReasonInvalidSignature   = "invalid_signature"        // the signature does not verify with the issuer's key
	ReasonUnknownKey         = "unknown_key"              // the kid is not in the issuer's key set, even refreshed
	ReasonKeysUnavailable    = "keys_unavailable"         // the issuer's key set cannot be fetched (retryable)
	ReasonTokenExpired       = "token_expired"            // exp (plus the clock skew) has passed
	ReasonTokenNotYetValid   = "token_not_yet_valid"      // nbf or iat is in the future
	ReasonWrongIssuer        = "wrong_issuer"             // iss is not the configured issuer
	ReasonWrongAudience      = "wrong_audience"           // aud does not name this API
	ReasonClaimMissing       = "claim_missing"            // sub, exp or the workspaces claim is missing or malformed
	ReasonTokenRevoked       = "token_revoked"            // a static token a reload removed or changed
	ReasonMissingScope       = "missing_scope"            // FORBIDDEN: the field needs a scope the credential lacks
	ReasonWorkspaceForbidden = "workspace_not_authorized" // FORBIDDEN: another workspace's data
)

// Principal is who a request comes from, whatever credential it presented: the subject, the
// workspaces it may use, its scopes and until when (SPEC §8). Every credential kind makes one at
// the edge (HTTP header, websocket connection_init, SSE), and the GraphQL layer reads it through
// Authenticator.Identify only. The zero value is no one.
type Principal struct {
	// Subject names the caller: a JWT's sub, a static token's name; "" in open mode. Fork
	// operations record it as requestedBy and acknowledgedBy; logs and traces carry it.
	Subject string
	// Name is a JWT's display name (name, preferred_username or email), else Subject.
	Name string
	// Workspaces lists the workspaces the caller may read and change, sorted; nil in open mode,
	// which reaches every workspace.
	Workspaces []string
	// Scopes are the caller's rights.
	Scopes Scopes
	// ExpiresAt is the credential's exp; zero when it does not expire.
	ExpiresAt time.Time
	// Source is the kind of credential.
	Source Source
	// Issuer is a JWT's iss; "" otherwise.
	Issuer string

	// validUntil is when the server stops accepting the credential: exp plus the clock skew
	// allowed; zero: never.
	validUntil time.Time
	// revoked ends when a reload of the tokens file removes or changes the static token; nil for
	// credentials that cannot be revoked.
	revoked context.Context
}

// OpenPrincipal is the caller of a server without credentials: every workspace, every scope.
func OpenPrincipal() Principal {
	return Principal{Source: SourceOpen, Scopes: AllScopes}
}

// Open reports whether p is open mode's caller.
func (p Principal) Open() bool { return p.Source == SourceOpen }

// Key names p for per-caller bounds (rate limits, SSE reservations): its credential kind and
// subject, so a token name and a JWT subject never share a bucket.
func (p Principal) Key() string {
	switch p.Source {
	case SourceToken:
		return "token:" + p.Subject
	case SourceJWT:
		return "jwt:" + p.Issuer + " " + p.Subject
	}
	return ""
}

// ValidUntil is when the server stops accepting p's credential (exp plus the clock skew); zero
// when it does not expire.
func (p Principal) ValidUntil() time.Time { return p.validUntil }

// Authorize decides whether p may use workspace with scope at now. Open mode allows everything.
// workspace "" asks about no workspace (viewer, nodes(ids: [])); scope "" asks for no scope
// (viewer). Errors (*Error): UNAUTHENTICATED with reason token_expired or token_revoked (the
// credential ended after it was accepted: a websocket's or SSE stream's), FORBIDDEN with reason
// workspace_not_authorized, FORBIDDEN with reason missing_scope and extensions.scope naming the
// scope as the schema's Scope enum does (FORK).
func (p Principal) Authorize(now time.Time, workspace string, scope Scope) error {
	if p.Open() {
		return nil
	}
	if err := p.ended(now); err != nil {
		return err
	}
	if workspace != "" && !p.HasWorkspace(workspace) {
		return &Error{Code: string(forkengine.CodeForbidden), Message: fmt.Sprintf("this credential cannot access workspace %s", workspace),
			Extra: map[string]any{"reason": ReasonWorkspaceForbidden}}
	}
	if scope != "" && !p.Scopes.Has(scope) {
		return &Error{Code: string(forkengine.CodeForbidden),
			Message: fmt.Sprintf("this field needs the %s scope, which this credential does not grant", scope),
			Extra:   map[string]any{"reason": ReasonMissingScope, "scope": strings.ToUpper(string(scope))}}
	}
	return nil
}

// HasWorkspace reports whether p may use workspace (always in open mode).
func (p Principal) HasWorkspace(workspace string) bool {
	if p.Open() {
		return true
	}
	_, found := slices.BinarySearch(p.Workspaces, workspace)
	return found
}

// ended returns why p's credential is no longer accepted at now, or nil.
func (p Principal) ended(now time.Time) error {
	if !p.validUntil.IsZero() && !now.Before(p.validUntil) {
		return unauthenticated(ReasonTokenExpired, "the token expired at %s", p.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if p.revoked != nil && p.revoked.Err() != nil {
		return unauthenticated(ReasonTokenRevoked, "the token was revoked")
	}
	return nil
}

// unauthenticated is an UNAUTHENTICATED refusal with a reason.
func unauthenticated(reason, format string, args ...any) *Error {
	return &Error{Code: string(forkengine.CodeUnauthenticated), Message: fmt.Sprintf(format, args...),
		Extra: map[string]any{"reason": reason}}
}

// streamEnded is the error a stream ends with when its credential does: TOKEN_EXPIRED or
// TOKEN_REVOKED (websocket close 4403 with the code as its reason; SSE a last error event).
func streamEnded(code forkengine.Code, message string) *Error {
	return &Error{Code: string(code), Message: message}
}

var (
	errStreamExpired = streamEnded(forkengine.CodeTokenExpired,
		"the token this stream was opened with expired; reconnect with a fresh one and resume from the last cursor")
	errStreamRevoked = streamEnded(forkengine.CodeTokenRevoked,
		"the token this stream was opened with was revoked; reconnect with a valid one")
)

// Lifetime returns a context that ends when p's credential stops being accepted, its cause the
// error a stream ends with then (TOKEN_EXPIRED at exp plus the clock skew, TOKEN_REVOKED when a
// reload of the tokens file drops the token), and the function that releases it. It returns nil
// contexts for a credential that never ends (open mode, a -tokens token).
func (p Principal) Lifetime() (context.Context, context.CancelFunc) {
	if p.validUntil.IsZero() && p.revoked == nil {
		return nil, nil
	}
	base, cancel := context.WithCancelCause(context.Background())
	life := base
	stops := []func(){func() { cancel(context.Canceled) }}
	if p.revoked != nil {
		stop := context.AfterFunc(p.revoked, func() { cancel(errStreamRevoked) })
		stops = append(stops, func() { stop() })
	}
	if !p.validUntil.IsZero() {
		var stop context.CancelFunc
		life, stop = context.WithDeadlineCause(base, p.validUntil, errStreamExpired)
		stops = append(stops, stop)
	}
	return life, func() {
		for _, stop := range stops {
			stop()
		}
	}
}
