package transports

import (
	"context"
	"sync"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

type subscriptionErrorsKey struct{}

// subscriptionErrorList collects the errors a resolver reports for its stream. The resolver
// adds them from its own goroutine, the transport reads them after the stream ends.
type subscriptionErrorList struct {
	mu   sync.Mutex
	errs gqlerror.List
}

// AddSubscriptionError ends a subscription with an error instead of `complete`: add the error,
// then close the resolver's channel. graphql-transport-ws clients receive an `error` message
// (and no `complete`), legacy graphql-ws clients an `error` message, SSE clients a last `next`
// event carrying the errors before `complete`. Use it, for example, to tell a subscriber that
// fell behind to resume from its last cursor. It returns false (and does nothing) when ctx does
// not belong to a streaming operation of these transports.
//
// gqlgen's own transport.AddSubscriptionError works only with gqlgen's websocket transport; call
// this one instead.
func AddSubscriptionError(ctx context.Context, err *gqlerror.Error) bool {
	list, ok := ctx.Value(subscriptionErrorsKey{}).(*subscriptionErrorList)
	if !ok {
		return false
	}
	list.mu.Lock()
	defer list.mu.Unlock()
	list.errs = append(list.errs, err)
	return true
}

func withSubscriptionErrors(ctx context.Context) context.Context {
	return context.WithValue(ctx, subscriptionErrorsKey{}, &subscriptionErrorList{})
}

func subscriptionErrors(ctx context.Context) gqlerror.List {
	list, ok := ctx.Value(subscriptionErrorsKey{}).(*subscriptionErrorList)
	if !ok {
		return nil
	}
	list.mu.Lock()
	defer list.mu.Unlock()
	return list.errs
}
