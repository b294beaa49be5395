package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// DefaultJWTAlgorithms are the signature algorithms accepted unless told otherwise. HMAC
// algorithms are never accepted (a shared secret is no way to trust an issuer, and accepting
// HS256 is how a public RSA key becomes a signing secret); neither is "none".
var DefaultJWTAlgorithms = []string{"RS256", "ES256", "EdDSA"}

// allowedJWTAlgorithms are the asymmetric algorithms that may be configured.
var allowedJWTAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384,
	jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// Defaults of JWTConfig.
const (
	DefaultJWTClockSkew      = 30 * time.Second
	DefaultWorkspacesClaim   = "workspaces"
	DefaultScopesClaim       = "scope"
	maxVerifiedTokensCached  = 10_000
	verifiedCacheEvictBudget = 64 // entries inspected per insert into a full cache
)

// JWTConfig configures JWT bearer tokens of one issuer (SPEC §8).
type JWTConfig struct {
	// Issuer is the expected iss. With JWKSURL empty, the keys are found by OIDC discovery
	// (Issuer + "/.well-known/openid-configuration" → jwks_uri). At least one of the two is set.
	Issuer string
	// JWKSURL is the issuer's key set (JWKS), when known; it skips discovery.
	JWKSURL string
	// Audience is the aud this API answers to (required): a token for another API is refused.
	Audience string
	// Algorithms are the accepted alg values (default DefaultJWTAlgorithms); only asymmetric
	// ones are allowed.
	Algorithms []string
	// ClockSkew is how far exp, nbf and iat may be off (default DefaultJWTClockSkew); negative
	// means none. A stream ends at exp plus the skew, when the token stops being accepted.
	ClockSkew time.Duration
	// WorkspacesClaim names the claim listing the workspaces (a string or an array of strings;
	// default "workspaces"). Ignored when Workspace is set.
	WorkspacesClaim string
	// Workspace, when set, is the one workspace every token of this issuer reaches.
	Workspace string
	// ScopesClaim names the claim holding the scopes: a space-separated string (OAuth2 `scope`,
	// the default) or an array of strings (`scp`, `permissions`).
	ScopesClaim string
	// ScopePrefix, when set, is stripped from each scope, and scopes without it are ignored
	// ("forkgraph:" maps "forkgraph:read" to read and leaves "openid" out).
	ScopePrefix string
	// Keys tunes the key set cache; zero fields take its defaults.
	Keys KeySetOptions
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// JWTVerifier verifies JWT bearer tokens against one issuer's keys and maps their claims to a
// Principal: sub is the subject, the workspaces claim (or the issuer's fixed workspace) the
// workspaces, the scopes claim the scopes. Signatures, key sets and claim checks are go-jose's;
// the key cache and the claim mapping are this package's. Tokens already verified are
// remembered (by hash, until they expire), so a client sending the same token with every
// request pays for one signature check.
type JWTVerifier struct {
	cfg  JWTConfig
	algs []jose.SignatureAlgorithm
	keys *KeySet

	mu       sync.Mutex
	verified map[tokenHash]verifiedToken
}

// verifiedToken is a remembered verification: the principal and the key that signed it.
type verifiedToken struct {
	principal Principal
	kid       string
}

// NewJWTVerifier checks cfg and returns its verifier; it fetches nothing yet (KeySet.Start does).
// Errors name the setting at fault.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	if cfg.Issuer == "" && cfg.JWKSURL == "" {
		return nil, errors.New("JWT: an issuer (discovery) or a JWKS URL is required")
	}
	if cfg.Audience == "" {
		return nil, errors.New("JWT: an audience is required, so tokens minted for other APIs are refused")
	}
	if cfg.Workspace != "" {
		if err := forkengine.ValidateID("workspace", cfg.Workspace); err != nil {
			return nil, fmt.Errorf("JWT workspace: %w", err)
		}
	}
	if cfg.WorkspacesClaim == "" {
		cfg.WorkspacesClaim = DefaultWorkspacesClaim
	}
	if cfg.ScopesClaim == "" {
		cfg.ScopesClaim = DefaultScopesClaim
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = DefaultJWTClockSkew
	}
	cfg.ClockSkew = max(cfg.ClockSkew, 0)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultJWTAlgorithms
	}
	var algs []jose.SignatureAlgorithm
	for _, name := range cfg.Algorithms {
		alg := jose.SignatureAlgorithm(strings.TrimSpace(name))
		if !slices.Contains(allowedJWTAlgorithms, alg) {
			return nil, fmt.Errorf("JWT algorithm %q is not allowed; choose among %v (never none or HS*)", name, allowedJWTAlgorithms)
		}
		algs = append(algs, alg)
	}
	keys, err := NewKeySet(cfg.Issuer, cfg.JWKSURL, cfg.Keys, cfg.Now)
	if err != nil {
		return nil, err
	}
	v := &JWTVerifier{cfg: cfg, algs: algs, keys: keys, verified: map[tokenHash]verifiedToken{}}
	keys.onKeys = v.forgetKeysGone
	return v, nil
}

// Keys is the verifier's key set cache (to start its refreshes and report on it).
func (v *JWTVerifier) Keys() *KeySet { return v.keys }

// Verify checks a JWT and returns its principal. Errors (*Error, UNAUTHENTICATED with a
// reason): token_too_large, invalid_token (not a compact JWS, an algorithm outside the
// allow-list, alg none, several signatures), unknown_key, keys_unavailable (retryable),
// invalid_signature, token_expired, token_not_yet_valid, wrong_issuer, wrong_audience,
// claim_missing (sub, exp or the workspaces).
func (v *JWTVerifier) Verify(ctx context.Context, token string) (Principal, error) {
	if len(token) > MaxTokenBytes {
		return Principal{}, unauthenticated(ReasonTokenTooLarge, "the token is %d bytes; at most %d are read", len(token), MaxTokenBytes)
	}
	return v.verify(ctx, token, hashToken(token))
}

func (v *JWTVerifier) verify(ctx context.Context, token string, h tokenHash) (Principal, error) {
	now := v.cfg.Now()
	if p, ok := v.remembered(h, now); ok {
		return p, nil
	}
	p, kid, err := v.verifySigned(ctx, token, now)
	if err != nil {
		return Principal{}, err
	}
	v.remember(h, verifiedToken{principal: p, kid: kid}, now)
	return p, nil
}

// verifySigned checks the token's signature and claims, and returns its principal and the kid
// of the key that signed it.
func (v *JWTVerifier) verifySigned(ctx context.Context, token string, now time.Time) (Principal, string, error) {
	parsed, err := jwt.ParseSigned(token, v.algs)
	if err != nil || len(parsed.Headers) != 1 {
		return Principal{}, "", unauthenticated(ReasonInvalidToken,
			"the bearer token is not a JWT signed with an accepted algorithm (%s)", strings.Join(v.cfg.Algorithms, ", "))
	}
	header := parsed.Headers[0]
	candidates, err := v.keys.Lookup(ctx, header.KeyID)
	if err != nil {
		return Principal{}, "", err
	}
	var std jwt.Claims
	var custom map[string]json.RawMessage
	verified := false
	for _, key := range candidates {
		if key.Algorithm != "" && key.Algorithm != header.Algorithm {
			continue // a key published for one algorithm signs with that one only
		}
		if parsed.Claims(key.Key, &std, &custom) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Principal{}, "", unauthenticated(ReasonInvalidSignature, "the token's signature does not verify with the issuer's key")
	}
	p, err := v.principal(now, std, custom)
	return p, header.KeyID, err
}

// principal checks the standard claims and maps the rest.
func (v *JWTVerifier) principal(now time.Time, std jwt.Claims, custom map[string]json.RawMessage) (Principal, error) {
	if std.Expiry == nil {
		return Principal{}, unauthenticated(ReasonClaimMissing, "the token has no exp claim; tokens without an expiry are refused")
	}
	expected := jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: jwt.Audience{v.cfg.Audience}, Time: now}
	switch err := std.ValidateWithLeeway(expected, v.cfg.ClockSkew); {
	case errors.Is(err, jwt.ErrExpired):
		return Principal{}, unauthenticated(ReasonTokenExpired, "the token expired at %s", std.Expiry.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return Principal{}, unauthenticated(ReasonTokenNotYetValid, "the token is not valid yet (nbf or iat is in the future)")
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return Principal{}, unauthenticated(ReasonWrongIssuer, "the token's issuer is not the one this server trusts")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Principal{}, unauthenticated(ReasonWrongAudience, "the token's audience does not name this API (%s)", v.cfg.Audience)
	case err != nil:
		return Principal{}, unauthenticated(ReasonInvalidToken, "the token's claims are invalid")
	}
	if std.Subject == "" {
		return Principal{}, unauthenticated(ReasonClaimMissing, "the token has no sub claim")
	}
	if forkengine.ValidateID("sub", std.Subject) != nil {
		// It is stored as requestedBy and logged: the id rules (no control characters, at most
		// 200 bytes) keep it fit for both.
		return Principal{}, unauthenticated(ReasonClaimMissing, "the token's sub claim is not a valid id")
	}
	workspaces, err := v.workspaces(custom)
	if err != nil {
		return Principal{}, err
	}
	exp := std.Expiry.Time()
	return Principal{Subject: std.Subject, Name: displayName(custom, std.Subject), Workspaces: workspaces,
		Scopes: v.scopes(custom), ExpiresAt: exp, Source: SourceJWT, Issuer: std.Issuer,
		validUntil: exp.Add(v.cfg.ClockSkew)}, nil
}

// workspaces reads the workspaces claim (a string or an array of strings) or the fixed one.
func (v *JWTVerifier) workspaces(custom map[string]json.RawMessage) ([]string, error) {
	if v.cfg.Workspace != "" {
		return []string{v.cfg.Workspace}, nil
	}
	names, ok := stringsClaim(custom[v.cfg.WorkspacesClaim], false)
	if !ok || len(names) == 0 {
		return nil, unauthenticated(ReasonClaimMissing, "the token has no %s claim naming the workspaces it may use", v.cfg.WorkspacesClaim)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for _, ws := range names {
		if forkengine.ValidateID("workspace", ws) != nil {
			return nil, unauthenticated(ReasonClaimMissing, "the token's %s claim holds a workspace that is not a valid id", v.cfg.WorkspacesClaim)
		}
	}
	return names, nil
}

// scopes reads the scopes claim; names that are not scopes (openid, profile, ...) are ignored.
func (v *JWTVerifier) scopes(custom map[string]json.RawMessage) Scopes {
	names, _ := stringsClaim(custom[v.cfg.ScopesClaim], true)
	var set Scopes
	for _, name := range names {
		name, ok := strings.CutPrefix(name, v.cfg.ScopePrefix)
		if !ok {
			continue
		}
		if scope, known := ParseScope(name); known {
			set |= ScopesOf(scope)
		}
	}
	return set
}

// stringsClaim reads a claim that is an array of strings or one string, split on spaces when
// split is set (OAuth2's scope).
func stringsClaim(raw json.RawMessage, split bool) ([]string, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if split {
			return strings.Fields(one), true
		}
		return []string{one}, true
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many, true
	}
	return nil, false
}

// displayName is the first of name, preferred_username and email, else the subject.
func displayName(custom map[string]json.RawMessage, subject string) string {
	for _, claim := range []string{"name", "preferred_username", "email"} {
		var s string
		if json.Unmarshal(custom[claim], &s) == nil && s != "" && forkengine.ValidateID("name", s) == nil {
			return s
		}
	}
	return subject
}

// remembered returns a verification of the same token made earlier, while it is still valid.
func (v *JWTVerifier) remembered(h tokenHash, now time.Time) (Principal, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	got, ok := v.verified[h]
	if !ok {
		return Principal{}, false
	}
	if !now.Before(got.principal.validUntil) {
		delete(v.verified, h)
		return Principal{}, false
	}
	return got.principal, true
}

// remember keeps a verification. A full cache first drops expired entries among a few it looks
// at, else one of them (map order is random): a bound, not an LRU, which is all a cache of
// tokens that each expire needs.
func (v *JWTVerifier) remember(h tokenHash, t verifiedToken, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.verified) >= maxVerifiedTokensCached {
		looked := 0
		for k, e := range v.verified {
			if !now.Before(e.principal.validUntil) || looked == verifiedCacheEvictBudget-1 {
				delete(v.verified, k)
			}
			if looked++; looked == verifiedCacheEvictBudget {
				break
			}
		}
	}
	v.verified[h] = t
}

// forgetKeysGone drops the verifications made with keys a refresh no longer lists: a key the
// issuer withdrew signs nothing from then on.
func (v *JWTVerifier) forgetKeysGone(present func(kid string) bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for h, t := range v.verified {
		if !present(t.kid) {
			delete(v.verified, h)
		}
	}
}
