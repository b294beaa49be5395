package resolvers

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// maxIdleBuckets bounds the clients remembered; beyond it, buckets that have refilled (clients
// idle long enough to be back at full burst) are forgotten, which changes nothing for them.
const maxIdleBuckets = 10_000

// RateLimit bounds the requests of each client (SPEC §8): every valid API token has a bucket of
// burst requests refilled at perSecond; requests without a valid token share one bucket per
// remote address, so guessing tokens is throttled too. A websocket counts once, when it connects.
// Requests over the limit get HTTP 429 with a RATE_LIMITED GraphQL error.
type RateLimit struct {
	tokens    Tokens
	perSecond float64
	burst     float64
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewRateLimit returns a limiter for the tokens; perSecond <= 0 disables it.
func NewRateLimit(tokens Tokens, perSecond float64, burst int) *RateLimit {
	return &RateLimit{tokens: tokens, perSecond: perSecond, burst: math.Max(1, float64(burst)), now: time.Now, buckets: map[string]*bucket{}}
}

// HTTPMiddleware answers 429 (RATE_LIMITED, retryable, with Retry-After) to a client over its limit.
func (l *RateLimit) HTTPMiddleware(next http.Handler) http.Handler {
	if l == nil || l.perSecond <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait, ok := l.allow(l.clientKey(r))
		if ok {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", fmt.Sprint(int(math.Ceil(wait.Seconds()))))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{
			"message":    "rate limit exceeded; retry later",
			"extensions": map[string]any{"code": string(forkengine.CodeRateLimited), "retryable": true},
		}}})
	})
}

// allow takes one request from the client's bucket, or says how long until one is available.
func (l *RateLimit) allow(key string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		l.forgetIdle(now)
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.perSecond)
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / l.perSecond * float64(time.Second)), false
}

func (l *RateLimit) forgetIdle(now time.Time) {
	if len(l.buckets) < maxIdleBuckets {
		return
	}
	for key, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.perSecond >= l.burst {
			delete(l.buckets, key)
		}
	}
}

// clientKey names the client: its token when valid, else its address.
func (l *RateLimit) clientKey(r *http.Request) string {
	if c := l.tokens.authenticate(r.Header.Get("Authorization")); c.workspace != "" {
		_, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		return "token:" + strings.TrimSpace(token)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
}
