package forkenginetest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The store keeps what the SQL store keeps: times in UTC at microsecond precision, JSON as the
// bytes it was given (Settings defaulting to "{}"), operation JSON columns as their encoding.

func storedTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func storedTimePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := storedTime(*t)
	return &v
}

func clonePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

func cloneRaw(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

func storedSession(s forkengine.Session) forkengine.Session {
	s = s.Clone()
	if len(s.Settings) == 0 {
		s.Settings = json.RawMessage("{}")
	}
	s.CreatedAt = storedTime(s.CreatedAt)
	s.UpdatedAt = storedTime(s.UpdatedAt)
	s.DeletedAt = storedTimePtr(s.DeletedAt)
	return s
}

func storedTurn(t forkengine.Turn) forkengine.Turn {
	t.ProviderTurnBinding = cloneRaw(t.ProviderTurnBinding)
	t.StartedAt = storedTime(t.StartedAt)
	t.UpdatedAt = storedTime(t.UpdatedAt)
	t.SettledAt = storedTimePtr(t.SettledAt)
	return t
}

// storedOperation round-trips the JSON-encoded fields through their encoding, exactly as the SQL
// store does, so the fake cannot accept what the real store would mangle.
func storedOperation(op forkengine.ForkOperation) (forkengine.ForkOperation, error) {
	op.SourceProviderTurnBinding = cloneRaw(op.SourceProviderTurnBinding)
	var err error
	if op.TargetTurnBindings, err = roundTripJSON(op.TargetTurnBindings); err != nil {
		return op, fmt.Errorf("encode turn bindings of operation %s: %w", op.ID, err)
	}
	if op.Snapshot, err = roundTripJSON(op.Snapshot); err != nil {
		return op, fmt.Errorf("encode snapshot of operation %s: %w", op.ID, err)
	}
	// The frozen target is one JSON column in the SQL stores; it is kept as its encoding is.
	if op.Target, err = roundTripJSON(op.Target); err != nil {
		return op, fmt.Errorf("encode target of operation %s: %w", op.ID, err)
	}
	dropJSONNulls(&op)
	op.CreatedAt = storedTime(op.CreatedAt)
	op.UpdatedAt = storedTime(op.UpdatedAt)
	op.DispatchedAt = storedTimePtr(op.DispatchedAt)
	op.AcceptedAt = storedTimePtr(op.AcceptedAt)
	op.CompletedAt = storedTimePtr(op.CompletedAt)
	op.AcknowledgedAt = storedTimePtr(op.AcknowledgedAt)
	op.LeaseExpiresAt = storedTimePtr(op.LeaseExpiresAt)
	op.LastReconciledAt = storedTimePtr(op.LastReconciledAt)
	op.NextReconcileAt = storedTimePtr(op.NextReconcileAt)
	return op, nil
}

// dropJSONNulls undoes encoding/json turning a nil RawMessage into "null": what was absent
// before encoding is absent after decoding.
func dropJSONNulls(op *forkengine.ForkOperation) {
	orNil := func(raw json.RawMessage) json.RawMessage {
		if string(raw) == "null" {
			return nil
		}
		return raw
	}
	for i := range op.TargetTurnBindings {
		op.TargetTurnBindings[i].Binding = orNil(op.TargetTurnBindings[i].Binding)
	}
	op.Snapshot.Session.Settings = orNil(op.Snapshot.Session.Settings)
	for i := range op.Snapshot.Turns {
		op.Snapshot.Turns[i].ProviderTurnBinding = orNil(op.Snapshot.Turns[i].ProviderTurnBinding)
	}
	if op.Snapshot.Boundary != nil {
		op.Snapshot.Boundary.ProviderTurnBinding = orNil(op.Snapshot.Boundary.ProviderTurnBinding)
	}
	for i := range op.Snapshot.Overrides {
		op.Snapshot.Overrides[i].ProviderTurnBinding = orNil(op.Snapshot.Overrides[i].ProviderTurnBinding)
	}
}

func roundTripJSON[T any](v T) (T, error) {
	var out T
	raw, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(raw, &out)
	return out, err
}
