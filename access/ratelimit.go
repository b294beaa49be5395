package access

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/forkgraph/forkgraph/forkengine"
)

// maxIdleBuckets bounds the clients remembered; beyond it, buckets that have refilled (clients
// idle long enough to be back at full burst) are forgotten, which changes nothing for them.
const maxIdleBuckets = 10_000

// RateLimit bounds the requests of each client (SPEC §8): every valid API token has a bucket of
// burst requests refilled at perSecond; requests without a valid token share one bucket per
// client address (TrustedProxies.ClientAddress), so guessing tokens is throttled too. A
// websocket's upgrade request counts once, and then each operation it starts counts against its
// token's bucket (see LimitWebsocketOperation). Requests over the limit get HTTP 429 with a
// RATE_LIMITED GraphQL error; websocket operations over it get a RATE_LIMITED error message.
// The buckets are golang.org/x/time/rate limiters.
type RateLimit struct {
	tokens    Tokens
	proxies   TrustedProxies
	perSecond rate.Limit
	burst     int
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewRateLimit returns a limiter for the tokens; perSecond <= 0 disables it.
func NewRateLimit(tokens Tokens, proxies TrustedProxies, perSecond float64, burst int) *RateLimit {
	return &RateLimit{tokens: tokens, proxies: proxies, perSecond: rate.Limit(perSecond), burst: max(1, burst),
		now: time.Now, buckets: map[string]*rate.Limiter{}}
}

// HTTPMiddleware answers 429 (RATE_LIMITED, retryable, with Retry-After) to a client over its limit.
func (l *RateLimit) HTTPMiddleware(next http.Handler) http.Handler {
	if l == nil || l.perSecond <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := l.clientKey(r)
		if err := l.take(key); err != nil {
			w.Header().Set("Retry-After", fmt.Sprint(err.Extra["retryAfterSeconds"]))
			writeError(w, http.StatusTooManyRequests, err)
			return
		}
		// A websocket's operations are charged later, from the connection's context.
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), limitKey{}, boundLimit{l, key})))
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
	if c := bound.limit.tokens.authenticate(payloadAuthorization(payload)); c.token != "" {
		bound.key = "token:" + c.token
	}
	return context.WithValue(ctx, limitKey{}, bound)
}

// LimitWebsocketOperation takes one request from the bucket of the websocket whose context ctx
// is (transports.Websocket.OperationLimiter). Over the limit it returns an *Error with code
// RATE_LIMITED, retryable and retryAfterSeconds; the transport answers that operation alone.
func LimitWebsocketOperation(ctx context.Context) error {
	bound, ok := ctx.Value(limitKey{}).(boundLimit)
	if !ok {
		return nil
	}
	if err := bound.limit.take(bound.key); err != nil {
		return err
	}
	return nil
}

// take draws one request from the client's bucket, or says how long until one is available.
func (l *RateLimit) take(key string) *Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		l.forgetIdle(now)
		b = rate.NewLimiter(l.perSecond, l.burst)
		l.buckets[key] = b
	}
	res := b.ReserveN(now, 1)
	wait := res.DelayFrom(now)
	if wait == 0 {
		return nil
	}
	res.CancelAt(now) // a refused request must not spend a token it did not get
	return &Error{Message: "rate limit exceeded; retry later", Code: string(forkengine.CodeRateLimited),
		Extra: map[string]any{"retryable": true, "retryAfterSeconds": int(math.Ceil(wait.Seconds()))}}
}

func (l *RateLimit) forgetIdle(now time.Time) {
	if len(l.buckets) < maxIdleBuckets {
		return
	}
	for key, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, key)
		}
	}
}

// clientKey names the client: its token when valid, else its address.
// It authenticates the header itself: the limit runs before Tokens.HTTPMiddleware.
func (l *RateLimit) clientKey(r *http.Request) string {
	return clientKey(l.tokens.authenticate(r.Header.Get("Authorization")), l.proxies, r)
}
