package resolvers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
	"github.com/forkgraph/forkgraph/streamside"
)

// streamEnd tells the response that follows a subscription's last value why its stream ended.
// gqlgen subscription channels carry values only, so the resolver leaves the engine stream's
// error here (one slot per operation, made by withStreamEnd) and endStreamWithError reads it
// when the channel closes.
type streamEnd struct {
	mu  sync.Mutex
	err func() error
}

type streamEndKey struct{}

// withStreamEnd gives each operation its slot and its streamside.Stream, what its transport
// reads of its stream (srv.AroundOperations): both are made and written here, in resolvers.
func withStreamEnd(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	ctx, _ = streamside.With(ctx)
	return next(context.WithValue(ctx, streamEndKey{}, &streamEnd{}))
}

// watchStream records where the subscription's end reason comes from.
func watchStream(ctx context.Context, reason func() error) {
	if end, ok := ctx.Value(streamEndKey{}).(*streamEnd); ok {
		end.mu.Lock()
		end.err = reason
		end.mu.Unlock()
	}
}

func (end *streamEnd) take() error {
	end.mu.Lock()
	defer end.mu.Unlock()
	if end.err == nil {
		return nil
	}
	err := end.err()
	end.err = nil
	return err
}

// endStreamWithError (srv.AroundResponses) reports a failed subscription stream: when the
// transport reports stream ends itself (streamside.ReportEnds, e.g. graphql-transport-ws's
// `error` message), the presented error goes to the operation's streamside.Stream and the
// stream simply ends; otherwise it is sent as one last response holding only the error, and the
// next call ends the stream.
func endStreamWithError(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp != nil { // the common case: looking the slot up per response is a walk up ctx
		return resp
	}
	end, _ := ctx.Value(streamEndKey{}).(*streamEnd)
	if end == nil {
		return nil
	}
	err := end.take()
	if err == nil {
		return nil
	}
	graphql.AddError(ctx, err)
	presented := graphql.GetErrors(ctx)
	if streamside.EndsReported(ctx) {
		streamside.Of(ctx).End(presented[len(presented)-1])
		return nil
	}
	return &graphql.Response{Errors: presented}
}

// followOperation maps the engine's operation stream to the API.
func (r *Resolver) followOperation(ctx context.Context, ws, id string) (<-chan *models.ForkOperation, error) {
	s, err := r.engine.FollowOperation(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	watchStream(ctx, s.Err)
	out := make(chan *models.ForkOperation, 1)
	go func() {
		defer close(out)
		for op := range s.C {
			select {
			case out <- models.ForkOperationFrom(op):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// streamEvents maps the engine's workspace stream to the API: each event's view is made once
// and shared by the subscribers that get it (r.views), and a live-only stream joins the
// subscribers of the same operation, which share each event's execution (r.shared).
func (r *Resolver) streamEvents(ctx context.Context, ws string, after *string) (<-chan *models.WorkspaceEvent, error) {
	cursor, given, err := models.DecodeEventCursor(after)
	if err != nil {
		return nil, err
	}
	from := forkengine.WorkspacePosition{Cursor: cursor, Resume: given}
	s, err := r.workspaces.Follow(ctx, ws, from)
	if err != nil {
		return nil, err
	}
	watchStream(ctx, func() error { return resumeHint(s.Err(), s.LastCursor()) })
	// Both the shared member and gqlgen read s.C: it is what every next response waits for.
	streamside.Of(ctx).SetReady(s.OnReady)
	if from.Shareable() {
		if shared, ok := r.shared.join(ctx, ws, s.C); ok {
			return shared, nil
		}
	}
	return s.C, nil
}

// resumeHint names, in a RESUME_REQUIRED error, the cursor to resume from.
func resumeHint(err error, last int64) error {
	var fe *forkengine.Error
	if err == nil || !errors.As(err, &fe) || fe.Code != forkengine.CodeResumeRequired {
		return err
	}
	resume := "subscribe again without after"
	if last > 0 {
		resume = fmt.Sprintf("subscribe again with after: %q", models.EventCursor(last))
	}
	hinted := *fe
	hinted.Message = fe.Message + "; " + resume
	return &hinted
}
