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

// RateLimit bounds the requests of each client (SPEC §8): every subject (a valid static token's
// name, a valid JWT's issuer and sub: Principal.Key) has a bucket of burst requests refilled at
// perSecond, so one user's burst never throttles another's; requests without a valid credential
// share one bucket per client address (TrustedProxies.ClientAddress), so guessing tokens is
// throttled too. It reads the credential Authenticator.HTTPMiddleware recorded, so it runs inside
// it. A websocket's upgrade request counts once, and then each operation it starts counts
// against its subject's bucket (see LimitWebsocketOperation). Requests over the limit get HTTP 429 with a
// RATE_LIMITED GraphQL error; websocket operations over it get a RATE_LIMITED error message.
// The buckets are golang.org/x/time/rate limiters.
type RateLimit struct {
	proxies   TrustedProxies
	perSecond rate.Limit
	burst     int
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewRateLimit returns a limiter; perSecond <= 0 disables it.
func NewRateLimit(proxies TrustedProxies, perSecond float64, burst int) *RateLimit {
	return &RateLimit{proxies: proxies, perSecond: rate.Limit(perSecond), burst: max(1, burst),
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

// BindWebsocketRateLimit charges the later operations of an accepted websocket to the subject
// its connection_init authenticated (Authenticator.WebsocketInit ran first and recorded it in
// ctx), the same bucket as that subject's HTTP requests. Without one they stay charged to the
// upgrade request's client. ctx is the connection's; without a rate limit (open mode) it is
// returned unchanged.
func BindWebsocketRateLimit(ctx context.Context) context.Context {
	bound, ok := ctx.Value(limitKey{}).(boundLimit)
	if !ok {
		return ctx
	}
	if p, ok := principalOf(ctx); ok && p.Key() != "" {
		bound.key = "subject:" + p.Key()
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

// clientKey names the client: its subject when its credential is valid, else its address.
func (l *RateLimit) clientKey(r *http.Request) string {
	return l.proxies.ClientKey(r)
}
