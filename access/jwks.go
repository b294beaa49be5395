package access

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Defaults of KeySetOptions.
const (
	// DefaultKeyRefresh is how often the key set is fetched again while nothing asks for it, so a
	// key the issuer withdrew stops being trusted.
	DefaultKeyRefresh = 15 * time.Minute
	// DefaultUnknownKeyRefresh is the least time between two fetches made for an unknown kid:
	// a rotation is picked up at once, and a stream of tokens naming made-up kids costs the
	// issuer one request per interval, not one each.
	DefaultUnknownKeyRefresh = 10 * time.Second
	// DefaultKeyFetchTimeout bounds one discovery or JWKS request.
	DefaultKeyFetchTimeout = 5 * time.Second
	maxKeySetBytes         = 1 << 20
)

// KeySetOptions tunes a KeySet.
type KeySetOptions struct {
	Refresh           time.Duration // default DefaultKeyRefresh
	UnknownKeyRefresh time.Duration // default DefaultUnknownKeyRefresh
	Timeout           time.Duration // default DefaultKeyFetchTimeout
	Client            *http.Client  // default a client with Timeout
	// OnFetch is told about every fetch: how many keys the issuer publishes and the error
	// (nil: it worked). A failure keeps the keys known so far.
	OnFetch func(keys int, err error)
}

// KeySet is an issuer's signing keys, fetched from its JWKS (found by OIDC discovery when only
// the issuer is known) and cached by kid. A token naming a kid not in the cache makes it fetch
// again, at most once per UnknownKeyRefresh; it also refetches every Refresh. When the issuer
// cannot be reached the keys known so far keep working, and tokens needing others are refused
// with keys_unavailable.
type KeySet struct {
	issuer, jwksURL string
	opts            KeySetOptions
	now             func() time.Time
	onKeys          func(present func(kid string) bool) // told the kids of each set fetched

	mu          sync.Mutex
	keys        []jose.JSONWebKey
	fetched     bool      // a fetch has succeeded
	lastAttempt time.Time // the last fetch started
	lastErr     error     // the last fetch's error
	inflight    chan struct{}
}

// NewKeySet returns the key set of issuer (discovery) or at jwksURL. A URL must be https, or
// http to a loopback address (tests, a local identity provider).
func NewKeySet(issuer, jwksURL string, opts KeySetOptions, now func() time.Time) (*KeySet, error) {
	for _, u := range []string{issuer, jwksURL} {
		if u == "" {
			continue
		}
		if err := checkKeyURL(u); err != nil {
			return nil, err
		}
	}
	if opts.Refresh <= 0 {
		opts.Refresh = DefaultKeyRefresh
	}
	if opts.UnknownKeyRefresh <= 0 {
		opts.UnknownKeyRefresh = DefaultUnknownKeyRefresh
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultKeyFetchTimeout
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: opts.Timeout}
	}
	if now == nil {
		now = time.Now
	}
	return &KeySet{issuer: strings.TrimSuffix(issuer, "/"), jwksURL: jwksURL, opts: opts, now: now}, nil
}

// checkKeyURL refuses a key source anyone on the path could rewrite.
func checkKeyURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("JWT: %q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			return nil
		}
	}
	return fmt.Errorf("JWT: %s must be https (http only to a loopback address)", raw)
}

// Start fetches the keys once and then every Refresh until ctx ends. A failed first fetch is
// not fatal: it is reported (OnFetch) and retried on demand, so an identity provider that is
// down while forkgraph starts delays JWTs only.
func (k *KeySet) Start(ctx context.Context) {
	_ = k.refresh(ctx)
	go func() {
		ticker := time.NewTicker(k.opts.Refresh)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				_ = k.refresh(ctx)
			}
		}
	}()
}

// Len reports how many keys are cached.
func (k *KeySet) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.keys)
}

// Lookup returns the keys that may have signed a token naming kid ("" : every key). An unknown
// kid refreshes the set first, unless a fetch started less than UnknownKeyRefresh ago. Errors
// (*Error, UNAUTHENTICATED): unknown_key, keys_unavailable (the set cannot be fetched; retryable).
func (k *KeySet) Lookup(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	if keys := k.matching(kid); len(keys) > 0 {
		return keys, nil
	}
	k.mu.Lock()
	due := k.now().Sub(k.lastAttempt) >= k.opts.UnknownKeyRefresh || k.inflight != nil
	k.mu.Unlock()
	if due {
		_ = k.refresh(ctx)
	}
	if keys := k.matching(kid); len(keys) > 0 {
		return keys, nil
	}
	k.mu.Lock()
	fetched, lastErr := k.fetched, k.lastErr
	k.mu.Unlock()
	if lastErr != nil || !fetched {
		err := unauthenticated(ReasonKeysUnavailable, "the issuer's signing keys cannot be fetched right now; retry later")
		err.Extra["retryable"] = true
		return nil, err
	}
	return nil, unauthenticated(ReasonUnknownKey, "the token's signing key (kid %q) is not in the issuer's key set", kid)
}

// matching returns the cached keys for kid.
func (k *KeySet) matching(kid string) []jose.JSONWebKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []jose.JSONWebKey
	for _, key := range k.keys {
		if kid == "" || key.KeyID == kid {
			out = append(out, key)
		}
	}
	return out
}

// refresh fetches the set once; concurrent callers wait for the same fetch. On failure the keys
// known so far stay.
func (k *KeySet) refresh(ctx context.Context) error {
	k.mu.Lock()
	if wait := k.inflight; wait != nil {
		k.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.lastErr
	}
	done := make(chan struct{})
	k.inflight, k.lastAttempt = done, k.now()
	k.mu.Unlock()

	// The fetch is the set's, not the request's: a client that hangs up must not fail it for
	// the others waiting.
	fetchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), k.opts.Timeout)
	keys, err := k.fetch(fetchCtx)
	cancel()

	k.mu.Lock()
	if err == nil {
		k.keys, k.fetched = keys, true
	}
	k.lastErr, k.inflight = err, nil
	close(done)
	onKeys := k.onKeys
	k.mu.Unlock()
	if k.opts.OnFetch != nil {
		k.opts.OnFetch(len(keys), err)
	}
	if err == nil && onKeys != nil {
		onKeys(func(kid string) bool { return kid == "" || containsKid(keys, kid) })
	}
	return err
}

func containsKid(keys []jose.JSONWebKey, kid string) bool {
	for _, key := range keys {
		if key.KeyID == kid {
			return true
		}
	}
	return false
}

// fetch reads the key set, discovering its URL first when only the issuer is known. Only
// public signing keys are kept.
func (k *KeySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	jwksURL := k.jwksURL
	if jwksURL == "" {
		var err error
		if jwksURL, err = k.discover(ctx); err != nil {
			return nil, err
		}
	}
	var set jose.JSONWebKeySet
	if err := k.getJSON(ctx, jwksURL, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, key := range set.Keys {
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		if !key.Valid() || !key.IsPublic() {
			continue // a symmetric or private key has no place in a published set
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS: no public signing keys")
	}
	return keys, nil
}

// discover reads the issuer's OpenID configuration and returns its jwks_uri, after checking
// that the document names the issuer it was asked for (OpenID Connect Discovery §4.3).
func (k *KeySet) discover(ctx context.Context) (string, error) {
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := k.getJSON(ctx, k.issuer+"/.well-known/openid-configuration", &doc); err != nil {
		return "", fmt.Errorf("OIDC discovery: %w", err)
	}
	if strings.TrimSuffix(doc.Issuer, "/") != k.issuer {
		return "", fmt.Errorf("OIDC discovery: the document names issuer %q, not %q", doc.Issuer, k.issuer)
	}
	if err := checkKeyURL(doc.JWKSURI); err != nil {
		return "", fmt.Errorf("OIDC discovery: jwks_uri: %w", err)
	}
	return doc.JWKSURI, nil
}

// getJSON GETs url and decodes at most maxKeySetBytes of its JSON body into out.
func (k *KeySet) getJSON(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := k.opts.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if len(body) > maxKeySetBytes {
		return fmt.Errorf("GET %s: more than %d bytes", url, maxKeySetBytes)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}
