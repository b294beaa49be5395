package resolvers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/forkengine"
)

// maxIdleBuckets bounds the clients remembered; beyond it, buckets that have refilled (clients
// idle long enough to be back at full burst) are forgotten, which changes nothing for them.
const maxIdleBuckets = 10_000

// RateLimit bounds the requests of each client (SPEC §8): every valid API token has a bucket of
// burst requests refilled at perSecond; requests without a valid token share one bucket per
// remote address, so guessing tokens is throttled too. A websocket's upgrade request counts
// once, and then each operation it starts counts against its token's bucket (see
// LimitWebsocketOperation). Requests over the limit get HTTP 429 with a RATE_LIMITED GraphQL
// error; websocket operations over it get a RATE_LIMITED error message.
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
		key := l.clientKey(r)
		wait, ok := l.allow(key)
		if ok {
			// A websocket's operations are charged later, from the connection's context.
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), limitKey{}, boundLimit{l, key})))
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

// limitKey carries a boundLimit in a request's context, and so in its websocket's.
type limitKey struct{}

// boundLimit is the limiter and the bucket a connection's operations are charged to.
type boundLimit struct {
	limit *RateLimit
	key   string
}

// BindWebsocketRateLimit charges the later operations of an accepted websocket to the token its
// connection_init payload presents ({"authorization": "Bearer ..."}), the same bucket as that
// token's HTTP requests. Without one in the payload they stay charged to the upgrade request's
// client. ctx is the connection's; without a rate limit (open mode) it is returned unchanged.
func BindWebsocketRateLimit(ctx context.Context, payload map[string]any) context.Context {
	bound, ok := ctx.Value(limitKey{}).(boundLimit)
	if !ok {
		return ctx
	}
	authorization, _ := payload["authorization"].(string)
	if authorization == "" {
		authorization, _ = payload["Authorization"].(string)
	}
	if key, ok := bound.limit.tokenKey(authorization); ok {
		bound.key = key
	}
	return context.WithValue(ctx, limitKey{}, bound)
}

// LimitWebsocketOperation takes one request from the bucket of the websocket whose context ctx
// is (transports.Websocket.OperationLimiter). Over the limit it returns a RATE_LIMITED error,
// retryable, with retryAfterSeconds; the transport answers that operation alone with it.
func LimitWebsocketOperation(ctx context.Context) error {
	bound, ok := ctx.Value(limitKey{}).(boundLimit)
	if !ok {
		return nil
	}
	wait, ok := bound.limit.allow(bound.key)
	if ok {
		return nil
	}
	return &gqlerror.Error{
		Message: "rate limit exceeded; retry later",
		Extensions: map[string]any{"code": string(forkengine.CodeRateLimited), "retryable": true,
			"retryAfterSeconds": int(math.Ceil(wait.Seconds()))},
	}
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
	if key, ok := l.tokenKey(r.Header.Get("Authorization")); ok {
		return key
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "addr:" + host
}

// tokenKey names the bucket of a valid "Bearer <token>" authorization.
func (l *RateLimit) tokenKey(authorization string) (string, bool) {
	if l.tokens.authenticate(authorization).workspace == "" {
		return "", false
	}
	_, token, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	return "token:" + strings.TrimSpace(token), true
}
