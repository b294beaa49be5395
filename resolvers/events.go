package resolvers

import (
	"context"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// streamEvents replays the durable log after the client's cursor, then streams live events. It
// subscribes before replaying, so an event committed meanwhile arrives live; live events at or
// below the last cursor sent are skipped, so none is sent twice.
func (r *Resolver) streamEvents(ctx context.Context, ws string, after *string) (<-chan *models.WorkspaceEvent, error) {
	cursor, given, err := models.DecodeEventCursor(after)
	if err != nil {
		return nil, err
	}
	if !given {
		return r.liveEvents(ctx, ws), nil
	}
	sub := r.broker.SubscribeShared(ws)
	if err := r.engine.CheckResumeCursor(ctx, ws, cursor); err != nil {
		sub.Close()
		return nil, err
	}
	out := make(chan *models.WorkspaceEvent, 1)
	go func() {
		defer close(out)
		defer sub.Close()
		last, err := r.replay(ctx, ws, cursor, out)
		if err != nil {
			failStream(ctx, err)
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.Events():
				if !ok {
					failStream(ctx, lagged(sub.Err(), last))
					return
				}
				if ev.Cursor <= last {
					continue
				}
				if !send(ctx, out, models.WorkspaceEventFrom(*ev)) {
					return
				}
				last = ev.Cursor
			}
		}
	}()
	return out, nil
}

// liveEvents streams live events with no goroutine of its own (with 10,000 subscribers a
// goroutine each is the largest share of their memory): the broker hands each event to the
// subscription in Publish, which puts the event's API view on the channel gqlgen reads. When that
// channel is full, the broker closes the subscription and the stream ends with RESUME_REQUIRED,
// naming the last cursor queued. The context's end closes the subscription.
func (r *Resolver) liveEvents(ctx context.Context, ws string) <-chan *models.WorkspaceEvent {
	out := make(chan *models.WorkspaceEvent, r.broker.QueueSize())
	var last int64 // written and read only in the broker's callbacks, which hold its lock
	sub := r.broker.SubscribeFunc(ws, func(ev *forkengine.Event) bool {
		select {
		case out <- r.views.of(ev):
			last = ev.Cursor
			return true
		default:
			return false
		}
	}, func(err error) {
		if err != nil {
			failStream(ctx, lagged(err, last))
		}
		close(out)
	})
	context.AfterFunc(ctx, sub.Close)
	return out
}

// replay sends every logged event after cursor (0: the start of the log) and returns the last
// cursor sent.
func (r *Resolver) replay(ctx context.Context, ws string, cursor int64, out chan<- *models.WorkspaceEvent) (int64, error) {
	for {
		page, err := r.engine.Reader().EventsAfter(ctx, ws, cursor, replayPage)
		if err != nil {
			return cursor, fmt.Errorf("replay events of %s after %d: %w", ws, cursor, err)
		}
		for _, ev := range page {
			if !send(ctx, out, models.WorkspaceEventFrom(ev)) {
				return cursor, ctx.Err()
			}
			cursor = ev.Cursor
		}
		if len(page) < replayPage {
			return cursor, nil
		}
	}
}

// lagged explains why the broker dropped the subscriber (it fell behind) and where to resume.
// Errors: RESUME_REQUIRED.
func lagged(cause error, last int64) error {
	resume := "subscribe again without after"
	if last > 0 {
		resume = fmt.Sprintf("subscribe again with after: %q", models.EventCursor(last))
	}
	return &forkengine.Error{
		Code: forkengine.CodeResumeRequired, Reason: forkengine.ErrorReason(cause), Retryable: true,
		Message: "the event stream fell behind; " + resume, Err: cause,
	}
}
