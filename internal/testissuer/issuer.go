// Package testissuer is a real OpenID Connect issuer for tests, served from the test process:
// a discovery document and a JWKS over HTTP (httptest), with generated RSA, P-256 and Ed25519
// keys, and the tokens they sign. It can rotate keys, publish a key late, go down, and forge the
// tokens a verifier must refuse (alg none, HS256 keyed with the RSA public key, a tampered
// signature). forkgraph's access tests, the GraphQL matrix and the server tests verify its
// tokens exactly as they would an identity provider's.
package testissuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Audience is the aud the issuer's tokens name unless told otherwise.
const Audience = "https://forkgraph.test/api"

// Key is one signing key of the issuer.
type Key struct {
	ID        string
	Algorithm jose.SignatureAlgorithm
	private   crypto.Signer
}

// Issuer is the test identity provider.
type Issuer struct {
	t      testing.TB
	server *httptest.Server

	mu        sync.Mutex
	keys      map[string]*Key // every key it can sign with
	published []string        // kids in the JWKS, in order
	down      bool

	jwksFetches      atomic.Int64
	discoveryFetches atomic.Int64
}

// New starts an issuer publishing one key of each algorithm: kids "rsa-1" (RS256), "ec-1"
// (ES256) and "ed-1" (EdDSA). It stops with the test.
func New(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{t: t, keys: map[string]*Key{}}
	for _, alg := range []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA} {
		iss.publish(iss.NewKey(alg))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", iss.serveDiscovery)
	mux.HandleFunc("GET /jwks", iss.serveJWKS)
	iss.server = httptest.NewServer(mux)
	t.Cleanup(iss.server.Close)
	return iss
}

// URL is the issuer identifier (iss), also the base of its discovery document.
func (iss *Issuer) URL() string { return iss.server.URL }

// JWKSURL is where its key set is served.
func (iss *Issuer) JWKSURL() string { return iss.server.URL + "/jwks" }

// JWKSFetches counts the requests for the key set; DiscoveryFetches those for the discovery
// document.
func (iss *Issuer) JWKSFetches() int64 { return iss.jwksFetches.Load() }

// DiscoveryFetches counts the requests for the discovery document.
func (iss *Issuer) DiscoveryFetches() int64 { return iss.discoveryFetches.Load() }

// SetDown makes both endpoints answer 503 (down) or serve again.
func (iss *Issuer) SetDown(down bool) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.down = down
}

// NewKey generates a key of alg the issuer can sign with, without publishing it.
func (iss *Issuer) NewKey(alg jose.SignatureAlgorithm) *Key {
	iss.t.Helper()
	var signer crypto.Signer
	var err error
	var prefix string
	switch alg {
	case jose.RS256:
		signer, err = rsa.GenerateKey(rand.Reader, 2048)
		prefix = "rsa"
	case jose.ES256:
		signer, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		prefix = "ec"
	case jose.EdDSA:
		_, signer, err = ed25519.GenerateKey(rand.Reader)
		prefix = "ed"
	default:
		iss.t.Fatalf("testissuer: no key type for %s", alg)
	}
	if err != nil {
		iss.t.Fatalf("testissuer: generate %s key: %v", alg, err)
	}
	iss.mu.Lock()
	defer iss.mu.Unlock()
	n := 1
	for iss.keys[fmt.Sprintf("%s-%d", prefix, n)] != nil {
		n++
	}
	k := &Key{ID: fmt.Sprintf("%s-%d", prefix, n), Algorithm: alg, private: signer}
	iss.keys[k.ID] = k
	return k
}

// Publish adds k to the JWKS.
func (iss *Issuer) Publish(k *Key) { iss.publish(k) }

func (iss *Issuer) publish(k *Key) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.published = append(iss.published, k.ID)
}

// Withdraw removes the key kid from the JWKS (it can still sign, as a leaked key could).
func (iss *Issuer) Withdraw(kid string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	for i, id := range iss.published {
		if id == kid {
			iss.published = append(iss.published[:i], iss.published[i+1:]...)
			return
		}
	}
}

// Key returns the key kid.
func (iss *Issuer) Key(kid string) *Key {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.keys[kid]
}

// RSAPublicPEM is the PEM of the first RSA key's public half: what an attacker who read the
// JWKS holds, and signs HS256 tokens with to confuse a verifier.
func (iss *Issuer) RSAPublicPEM() []byte {
	k := iss.Key("rsa-1")
	der, err := x509.MarshalPKIXPublicKey(k.private.Public())
	if err != nil {
		iss.t.Fatalf("testissuer: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func (iss *Issuer) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	iss.discoveryFetches.Add(1)
	if iss.isDown() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer": iss.URL(), "jwks_uri": iss.JWKSURL(),
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256", "EdDSA"},
	})
}

func (iss *Issuer) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	iss.jwksFetches.Add(1)
	if iss.isDown() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	iss.mu.Lock()
	var set jose.JSONWebKeySet
	for _, kid := range iss.published {
		k := iss.keys[kid]
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.private.Public(), KeyID: k.ID, Algorithm: string(k.Algorithm), Use: "sig"})
	}
	iss.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

func (iss *Issuer) isDown() bool {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	return iss.down
}

// Claims are what a token says; zero fields take the defaults of Mint.
type Claims struct {
	Subject    string
	Issuer     string // default the issuer's URL
	Audience   []string
	Workspaces any // []string or string; nil: ["demo"]; NoWorkspaces: none
	Scope      string
	ExpiresIn  time.Duration // default 1h; negative: expired
	NotBefore  time.Time
	IssuedAt   time.Time
	Extra      map[string]any
	Now        time.Time // the issuing instant; default time.Now()
}

// NoWorkspaces leaves the workspaces claim out of a token; NoSubject, as Subject, leaves sub out.
const (
	NoWorkspaces = "\x00none"
	NoSubject    = "\x00none"
)

// Mint signs a token with the key kid ("rsa-1", "ec-1", "ed-1" or one made with NewKey).
func (iss *Issuer) Mint(kid string, c Claims) string {
	iss.t.Helper()
	k := iss.Key(kid)
	if k == nil {
		iss.t.Fatalf("testissuer: no key %q", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Algorithm, Key: k.private},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), k.ID))
	if err != nil {
		iss.t.Fatalf("testissuer: signer: %v", err)
	}
	token, err := jwt.Signed(signer).Claims(iss.claims(c)).Serialize()
	if err != nil {
		iss.t.Fatalf("testissuer: sign: %v", err)
	}
	return token
}

func (iss *Issuer) claims(c Claims) map[string]any {
	now := c.Now
	if now.IsZero() {
		now = time.Now()
	}
	if c.Subject == "" {
		c.Subject = "user-1"
	}
	if c.Issuer == "" {
		c.Issuer = iss.URL()
	}
	if c.Audience == nil {
		c.Audience = []string{Audience}
	}
	if c.ExpiresIn == 0 {
		c.ExpiresIn = time.Hour
	}
	claims := map[string]any{"sub": c.Subject, "iss": c.Issuer, "aud": c.Audience,
		"exp": now.Add(c.ExpiresIn).Unix(), "iat": now.Unix()}
	if !c.IssuedAt.IsZero() {
		claims["iat"] = c.IssuedAt.Unix()
	}
	if !c.NotBefore.IsZero() {
		claims["nbf"] = c.NotBefore.Unix()
	}
	switch ws := c.Workspaces.(type) {
	case nil:
		claims["workspaces"] = []string{"demo"}
	case string:
		if ws != NoWorkspaces {
			claims["workspaces"] = ws
		}
	default:
		claims["workspaces"] = ws
	}
	if c.Scope != "" {
		claims["scope"] = c.Scope
	}
	if c.Subject == NoSubject {
		delete(claims, "sub")
	}
	for k, v := range c.Extra {
		claims[k] = v
	}
	return claims
}

// Unsigned is the token of c with alg "none" and an empty signature.
func (iss *Issuer) Unsigned(c Claims) string {
	return encodeSegment(map[string]any{"alg": "none", "typ": "JWT"}) + "." + encodeSegment(iss.claims(c)) + "."
}

// HS256WithPublicKey is the token of c signed with HMAC-SHA256 keyed by the RSA key's public PEM,
// with kid rsa-1: the algorithm-confusion attack on a verifier that lets the header choose.
func (iss *Issuer) HS256WithPublicKey(c Claims) string {
	input := encodeSegment(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}) + "." + encodeSegment(iss.claims(c))
	mac := hmac.New(sha256.New, iss.RSAPublicPEM())
	mac.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Tampered is token with one claim changed after signing: the signature no longer matches.
func Tampered(token string, claim string, value any) string {
	parts := strings.Split(token, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	_ = json.Unmarshal(raw, &claims)
	claims[claim] = value
	parts[1] = encodeSegment(claims)
	return strings.Join(parts, ".")
}

func encodeSegment(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}
