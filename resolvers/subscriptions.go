package resolvers

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// replayPage is how many logged events one replay read returns.
const replayPage = 100

// streamFailure carries the error that ended a subscription stream to the response that reports
// it. gqlgen subscription channels carry values only; the stream closes its channel after
// setting the failure, and endStreamWithError turns the end of the stream into one error response.
type streamFailure struct {
	mu  sync.Mutex
	err error
}

type streamFailureKey struct{}

func (f *streamFailure) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *streamFailure) take() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.err
	f.err = nil
	return err
}

// withStreamFailure gives each operation a failure slot (srv.AroundOperations); the subscription
// resolver and every response of the operation see the same one.
func withStreamFailure(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(context.WithValue(ctx, streamFailureKey{}, &streamFailure{}))
}

// endStreamWithError (srv.AroundResponses) reports a failed subscription stream: when the
// transport can end an operation with an error (report returns true, e.g. graphql-transport-ws's
// `error` message), the presented error goes there and the stream simply ends; otherwise it is
// sent as one last response holding only the error, and the next call ends the stream. (gqlgen's
// generated subscription code reuses one buffer for every event; the transports encode each
// response before pulling the next, so nothing here copies it.)
func endStreamWithError(report func(context.Context, *gqlerror.Error) bool) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		resp := next(ctx)
		failure, _ := ctx.Value(streamFailureKey{}).(*streamFailure)
		if resp != nil || failure == nil {
			return resp
		}
		err := failure.take()
		if err == nil {
			return nil
		}
		graphql.AddError(ctx, err)
		presented := graphql.GetErrors(ctx)
		if report != nil && report(ctx, presented[len(presented)-1]) {
			return nil
		}
		return &graphql.Response{Errors: presented}
	}
}

func failStream(ctx context.Context, err error) {
	if failure, ok := ctx.Value(streamFailureKey{}).(*streamFailure); ok {
		failure.set(err)
	}
}

// send delivers v unless the client went away.
func send[T any](ctx context.Context, out chan<- T, v T) bool {
	select {
	case out <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

// statusRank orders statuses along the saga so stale or repeated events are skipped.
func statusRank(s forkengine.OperationStatus) int {
	switch {
	case s == forkengine.StatusPrepared:
		return 1
	case s == forkengine.StatusDispatching:
		return 2
	case s == forkengine.StatusProviderAccepted:
		return 3
	case s.Terminal():
		return 4
	}
	return 0
}

// followOperation streams one operation: its current state, then one message per later status,
// ending after a terminal one. It subscribes before reading, so no transition falls in between.
func (r *Resolver) followOperation(ctx context.Context, ws, id string) (<-chan *models.ForkOperation, error) {
	sub := r.broker.SubscribeShared(ws)
	op, err := r.engine.Operation(ctx, ws, id)
	if err != nil {
		sub.Close()
		return nil, operationNotFound(err, id)
	}
	out := make(chan *models.ForkOperation, 1)
	go func() {
		defer close(out)
		defer func() { sub.Close() }()
		if !send(ctx, out, models.ForkOperationFrom(op)) {
			return
		}
		for !op.Status.Terminal() {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.Events():
				if !ok { // fell behind: coalesce to the latest state
					sub = r.broker.SubscribeShared(ws)
					ev = &forkengine.Event{OperationID: id}
				}
				next, moved, err := r.operationAfter(ctx, op, *ev)
				if err != nil {
					failStream(ctx, err)
					return
				}
				if moved && !send(ctx, out, models.ForkOperationFrom(next)) {
					return
				}
				op = next
			}
		}
	}()
	return out, nil
}

// operationAfter returns the operation as an event left it, and whether that is a new status. An
// event carries the status it recorded; the row may have moved on since, and the client should
// still see each step, so the event's status wins when it is newer than the last one sent.
func (r *Resolver) operationAfter(ctx context.Context, last forkengine.ForkOperation, ev forkengine.Event) (forkengine.ForkOperation, bool, error) {
	if ev.OperationID != last.ID || (ev.Status != "" && statusRank(ev.Status) <= statusRank(last.Status)) {
		return last, false, nil
	}
	current, err := r.engine.Reader().GetOperation(ctx, last.WorkspaceID, last.ID)
	if err != nil {
		return last, false, err
	}
	if ev.Status != "" && statusRank(ev.Status) < statusRank(current.Status) {
		// Show the step the event recorded, without fields only a later step sets.
		current.Status, current.TargetTurnID, current.AcknowledgedAt = ev.Status, "", nil
	}
	return current, statusRank(current.Status) > statusRank(last.Status), nil
}

// operationNotFound keeps the engine's NOT_FOUND and names the id.
func operationNotFound(err error, id string) error {
	if isNotFound(err) && forkengine.ErrorCode(err) != forkengine.CodeNotFound {
		return forkengine.Errorf(forkengine.CodeNotFound, "fork operation %s not found", id)
	}
	return err
}
