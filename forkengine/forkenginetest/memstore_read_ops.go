package forkenginetest

import (
	"context"
	"slices"

	"github.com/forkgraph/forkgraph/forkengine"
)

// MessagesByTurnIDs returns each turn's messages in Position order.
func (v memView) MessagesByTurnIDs(_ context.Context, ws string, turnIDs []string) (map[string][]forkengine.Message, error) {
	st := v.load()
	out := map[string][]forkengine.Message{}
	for id := range idSet(turnIDs) {
		t, ok := st.turnByID(ws, id)
		if !ok {
			t = forkengine.Turn{WorkspaceID: ws, ID: id} // messages of a turn row that is gone
		}
		if msgs := st.turnMessages(t); len(msgs) > 0 {
			out[id] = msgs
		}
	}
	return out, nil
}

// MessagesByIDs returns the messages that exist among ids.
func (v memView) MessagesByIDs(_ context.Context, ws string, ids []string) (map[string]forkengine.Message, error) {
	st := v.load()
	out := map[string]forkengine.Message{}
	for _, id := range ids {
		if m, ok := st.messages[rowKey{ws, id}]; ok {
			out[id] = m
		} else if m, ok := st.presentedMessage(ws, id); ok {
			out[id] = m
		}
	}
	return out, nil
}

// LineagesByTargetIDs returns the lineage of each forked target among targetIDs.
func (v memView) LineagesByTargetIDs(_ context.Context, ws string, targetIDs []string) (map[string]forkengine.Lineage, error) {
	st := v.load()
	out := map[string]forkengine.Lineage{}
	for _, id := range targetIDs {
		if l, ok := st.lineages[rowKey{ws, id}]; ok {
			out[id] = l
		}
	}
	return out, nil
}

// LineagesBySourceIDs returns each source's lineages ordered by (ForkedAt, TargetSessionID).
func (v memView) LineagesBySourceIDs(_ context.Context, ws string, sourceIDs []string) (map[string][]forkengine.Lineage, error) {
	want := idSet(sourceIDs)
	out := map[string][]forkengine.Lineage{}
	for k, l := range v.load().lineages {
		if k.ws == ws && want[l.SourceSessionID] {
			out[l.SourceSessionID] = append(out[l.SourceSessionID], l)
		}
	}
	for _, ls := range out {
		slices.SortFunc(ls, func(a, b forkengine.Lineage) int {
			return compareKey(a.ForkedAt, a.TargetSessionID, b.ForkedAt, b.TargetSessionID)
		})
	}
	return out, nil
}

// GetOperation returns one operation or ErrNotFound.
func (v memView) GetOperation(_ context.Context, ws, id string) (forkengine.ForkOperation, error) {
	op, ok := v.load().operations[rowKey{ws, id}]
	if !ok {
		return forkengine.ForkOperation{}, notFound("operation", ws, id)
	}
	return op.Clone(), nil
}

// OperationsByIDs returns the operations that exist among ids.
func (v memView) OperationsByIDs(_ context.Context, ws string, ids []string) (map[string]forkengine.ForkOperation, error) {
	st := v.load()
	out := map[string]forkengine.ForkOperation{}
	for _, id := range ids {
		if op, ok := st.operations[rowKey{ws, id}]; ok {
			out[id] = op.Clone()
		}
	}
	return out, nil
}

// operationsWhere returns the matching operations of workspace ws ("" = every workspace) in
// (CreatedAt, ID) order.
func (v memView) operationsWhere(ws string, keep func(forkengine.ForkOperation) bool) []forkengine.ForkOperation {
	var out []forkengine.ForkOperation
	for k, op := range v.load().operations {
		if (ws == "" || k.ws == ws) && keep(op) {
			out = append(out, op.Clone())
		}
	}
	slices.SortFunc(out, func(a, b forkengine.ForkOperation) int {
		return compareKey(a.CreatedAt, a.ID, b.CreatedAt, b.ID)
	})
	return out
}

func (v memView) oneOperation(ws, what, key string, keep func(forkengine.ForkOperation) bool) (forkengine.ForkOperation, error) {
	ops := v.operationsWhere(ws, keep)
	if len(ops) == 0 {
		return forkengine.ForkOperation{}, notFound(what, ws, key)
	}
	return ops[len(ops)-1], nil
}

// GetOperationByRequestID returns the operation of a request id or ErrNotFound.
func (v memView) GetOperationByRequestID(_ context.Context, ws, requestID string) (forkengine.ForkOperation, error) {
	return v.oneOperation(ws, "operation with request id", requestID, func(op forkengine.ForkOperation) bool {
		return op.RequestID == requestID
	})
}

// LatestOperationOnBoundary returns the newest operation forking sourceID through turnID.
func (v memView) LatestOperationOnBoundary(_ context.Context, ws, sourceID, turnID string) (forkengine.ForkOperation, error) {
	return v.oneOperation(ws, "operation on boundary", sourceID+"/"+turnID, func(op forkengine.ForkOperation) bool {
		return op.SourceSessionID == sourceID && op.ThroughTurnID == turnID
	})
}

// LatestOperationStateOnBoundary is the state of LatestOperationOnBoundary's operation.
func (v memView) LatestOperationStateOnBoundary(ctx context.Context, ws, sourceID, turnID string) (forkengine.OperationState, error) {
	op, err := v.LatestOperationOnBoundary(ctx, ws, sourceID, turnID)
	if err != nil {
		return forkengine.OperationState{}, err
	}
	return op.State(), nil
}

// LatestOperationsOnBoundaries returns each boundary's newest operation, without its snapshot.
func (v memView) LatestOperationsOnBoundaries(_ context.Context, ws string, boundaries []forkengine.Boundary) (map[forkengine.Boundary]forkengine.ForkOperation, error) {
	want := map[forkengine.Boundary]bool{}
	for _, b := range boundaries {
		want[b] = true
	}
	out := map[forkengine.Boundary]forkengine.ForkOperation{}
	for _, op := range v.operationsWhere(ws, func(op forkengine.ForkOperation) bool {
		return want[forkengine.Boundary{SessionID: op.SourceSessionID, TurnID: op.ThroughTurnID}]
	}) {
		op.Snapshot = forkengine.Snapshot{}
		out[forkengine.Boundary{SessionID: op.SourceSessionID, TurnID: op.ThroughTurnID}] = op // later ones win
	}
	return out, nil
}

// OperationsBySourceIDs returns every operation whose source is one of sourceIDs.
func (v memView) OperationsBySourceIDs(_ context.Context, ws string, sourceIDs []string) ([]forkengine.ForkOperation, error) {
	want := idSet(sourceIDs)
	return v.operationsWhere(ws, func(op forkengine.ForkOperation) bool { return want[op.SourceSessionID] }), nil
}

// OperationReservingTarget returns the non-failed operation holding targetID or ErrNotFound.
func (v memView) OperationReservingTarget(_ context.Context, ws, targetID string) (forkengine.ForkOperation, error) {
	return v.oneOperation(ws, "operation reserving target", targetID, func(op forkengine.ForkOperation) bool {
		return op.TargetSessionID == targetID && op.Status != forkengine.StatusFailed
	})
}

func operationMatches(f forkengine.OperationFilter, op forkengine.ForkOperation) bool {
	return (f.SourceSessionID == "" || op.SourceSessionID == f.SourceSessionID) &&
		(f.TargetSessionID == "" || op.TargetSessionID == f.TargetSessionID) &&
		(f.ThroughTurnID == "" || op.ThroughTurnID == f.ThroughTurnID) &&
		(len(f.Statuses) == 0 || slices.Contains(f.Statuses, op.Status))
}

// ListOperations pages the operations matching f in (CreatedAt, ID) order.
func (v memView) ListOperations(_ context.Context, ws string, f forkengine.OperationFilter, after forkengine.PageCursor, limit int) ([]forkengine.ForkOperation, error) {
	ops := v.operationsWhere(ws, func(op forkengine.ForkOperation) bool {
		return operationMatches(f, op) && afterKey(after, op.CreatedAt, op.ID)
	})
	return limited(ops, limit), nil
}

// CountOperations counts the operations matching f.
func (v memView) CountOperations(_ context.Context, ws string, f forkengine.OperationFilter) (int, error) {
	return len(v.operationsWhere(ws, func(op forkengine.ForkOperation) bool { return operationMatches(f, op) })), nil
}

// RecoverableOperations pages the active operations of every workspace in (CreatedAt, ID) order.
func (v memView) RecoverableOperations(_ context.Context, after forkengine.PageCursor, limit int) ([]forkengine.ForkOperation, error) {
	ops := v.operationsWhere("", func(op forkengine.ForkOperation) bool {
		return op.Status.Active() && afterKey(after, op.CreatedAt, op.ID)
	})
	return limited(ops, limit), nil
}

// EventsAfter returns up to limit events of ws with Cursor > after, in cursor order.
func (v memView) EventsAfter(_ context.Context, ws string, after int64, limit int) ([]forkengine.Event, error) {
	var out []forkengine.Event
	for _, e := range v.load().events {
		if e.WorkspaceID == ws && e.Cursor > after {
			out = append(out, e)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// LogEventsAfter returns up to limit events of every workspace with Cursor > after.
func (v memView) LogEventsAfter(_ context.Context, after int64, limit int) ([]forkengine.Event, error) {
	var out []forkengine.Event
	for _, e := range v.load().events {
		if e.Cursor > after {
			out = append(out, e)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// LogHead returns the highest cursor of the log, or 0 when it is empty.
func (v memView) LogHead(context.Context) (int64, error) {
	events := v.load().events
	if len(events) == 0 {
		return 0, nil
	}
	return events[len(events)-1].Cursor, nil
}

// OldestEventCursor returns the smallest cursor of ws, or 0 when it has no events.
func (v memView) OldestEventCursor(_ context.Context, ws string) (int64, error) {
	for _, e := range v.load().events {
		if e.WorkspaceID == ws {
			return e.Cursor, nil
		}
	}
	return 0, nil
}

// LatestEventCursor returns the highest cursor of ws, or 0 when it has no events.
func (v memView) LatestEventCursor(_ context.Context, ws string) (int64, error) {
	events := v.load().events
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].WorkspaceID == ws {
			return events[i].Cursor, nil
		}
	}
	return 0, nil
}

// CountFamilyForks counts the family's lineages (walked down from the root) and its unfinished
// operations.
func (v memView) CountFamilyForks(_ context.Context, ws, rootID string) (int, error) {
	st := v.load()
	family := map[string]bool{rootID: true}
	for grew := true; grew; {
		grew = false
		for k, l := range st.lineages {
			if k.ws == ws && family[l.SourceSessionID] && !family[l.TargetSessionID] {
				family[l.TargetSessionID], grew = true, true
			}
		}
	}
	count := len(family) - 1
	for k, op := range st.operations {
		if k.ws == ws && family[op.SourceSessionID] && (op.Status.Active() || op.Status == forkengine.StatusUnknown) {
			count++
		}
	}
	return count, nil
}
