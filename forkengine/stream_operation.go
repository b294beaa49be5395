package forkengine

import (
	"context"
)

// FollowOperation streams one fork operation: its current state first, then one value per later
// status, ending after a terminal one (committed, failed, unknown). It subscribes to b before
// reading (the engine's broker, which its feed fills), so no transition falls in between; a subscriber that falls behind is not ended but
// catches up with the operation's latest state, since only the latest state matters here.
// Errors: BAD_USER_INPUT (ids), NOT_FOUND.
func (e *Engine) FollowOperation(ctx context.Context, workspaceID, id string) (*Stream[ForkOperation], error) {
	b := e.broker
	sub := b.SubscribeShared(workspaceID)
	op, err := e.Operation(ctx, workspaceID, id)
	if err != nil {
		sub.Close()
		return nil, err
	}
	out := make(chan ForkOperation, 1)
	s := &Stream[ForkOperation]{C: out}
	go func() {
		defer close(out)
		defer func() { sub.Close() }()
		if !send(ctx, out, op) {
			return
		}
		for !op.Status.Terminal() {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.Events():
				if !ok { // fell behind: coalesce to the latest state
					sub = b.SubscribeShared(workspaceID)
					ev = &Event{OperationID: op.ID}
				}
				next, moved, err := e.operationAfter(ctx, op, *ev)
				if err != nil {
					s.fail(err)
					return
				}
				if moved && !send(ctx, out, next) {
					return
				}
				op = next
			}
		}
	}()
	return s, nil
}

// operationAfter returns the operation as an event left it, and whether that is a new status. An
// event carries the status it recorded; the row may have moved on since, and the subscriber
// should still see each step, so the event's status wins when it is newer than the last one sent.
func (e *Engine) operationAfter(ctx context.Context, last ForkOperation, ev Event) (ForkOperation, bool, error) {
	if ev.OperationID != last.ID || (ev.Status != "" && statusRank(ev.Status) <= statusRank(last.Status)) {
		return last, false, nil
	}
	current, err := e.store.GetOperation(ctx, last.WorkspaceID, last.ID)
	if err != nil {
		return last, false, readError(err, "fork operation", last.ID)
	}
	if ev.Status != "" && statusRank(ev.Status) < statusRank(current.Status) {
		// Show the step the event recorded, without fields only a later step sets.
		current.Status, current.TargetTurnID, current.AcknowledgedAt = ev.Status, "", nil
	}
	return current, statusRank(current.Status) > statusRank(last.Status), nil
}

// statusRank orders statuses along the saga so stale or repeated events are skipped.
func statusRank(s OperationStatus) int {
	switch {
	case s == StatusPrepared:
		return 1
	case s == StatusDispatching:
		return 2
	case s == StatusProviderAccepted:
		return 3
	case s.Terminal():
		return 4
	}
	return 0
}
