package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// operationsTable describes fork_operations once, like the tables of rows.go: every column list,
// insert, update and scan of an operation is derived from it, and a row is read straight into a
// forkengine.ForkOperation. The snapshot has a table of its own (fork_operation_snapshots); the
// derived class columns (operation_classes.go) are written beside these, never read back.
var operationsTable = newTable("fork_operations", []string{"workspace_id", "id"},
	textColumn("workspace_id", func(o *forkengine.ForkOperation) *string { return &o.WorkspaceID }),
	textColumn("id", func(o *forkengine.ForkOperation) *string { return &o.ID }),
	textColumn("snapshot_hash", func(o *forkengine.ForkOperation) *string { return &o.SnapshotHash }),
	customColumn("target", encodeTarget, decodeTarget),
	textColumn("request_id", func(o *forkengine.ForkOperation) *string { return &o.RequestID }),
	textColumn("request_hash", func(o *forkengine.ForkOperation) *string { return &o.RequestHash }),
	textColumn("source_session_id", func(o *forkengine.ForkOperation) *string { return &o.SourceSessionID }),
	textColumn("target_session_id", func(o *forkengine.ForkOperation) *string { return &o.TargetSessionID }),
	textColumn("through_turn_id", func(o *forkengine.ForkOperation) *string { return &o.ThroughTurnID }),
	textColumn("target_turn_id", func(o *forkengine.ForkOperation) *string { return &o.TargetTurnID }),
	textColumn("source_provider_session_id", func(o *forkengine.ForkOperation) *string { return &o.SourceProviderSessionID }),
	textColumn("source_provider_turn_id", func(o *forkengine.ForkOperation) *string { return &o.SourceProviderTurnID }),
	rawJSONColumn("source_provider_turn_binding", func(o *forkengine.ForkOperation) *json.RawMessage { return &o.SourceProviderTurnBinding }),
	textColumn("provider", func(o *forkengine.ForkOperation) *string { return &o.Provider }),
	textColumn("driver_kind", func(o *forkengine.ForkOperation) *string { return &o.DriverKind }),
	textColumn("driver_version", func(o *forkengine.ForkOperation) *string { return &o.DriverVersion }),
	textColumn("status", func(o *forkengine.ForkOperation) *forkengine.OperationStatus { return &o.Status }),
	textColumn("error", func(o *forkengine.ForkOperation) *string { return &o.Error }),
	textColumn("target_title", func(o *forkengine.ForkOperation) *string { return &o.TargetTitle }),
	textColumn("target_provider_session_id", func(o *forkengine.ForkOperation) *string { return &o.TargetProviderSessionID }),
	textColumn("state_binding_mode", func(o *forkengine.ForkOperation) *forkengine.BindingMode { return &o.StateBindingMode }),
	customColumn("target_turn_bindings", encodeTurnBindings, decodeTurnBindings),
	textColumn("receipt", func(o *forkengine.ForkOperation) *string { return &o.Receipt }),
	microsColumn("created_at_us", func(o *forkengine.ForkOperation) *time.Time { return &o.CreatedAt }),
	microsColumn("updated_at_us", func(o *forkengine.ForkOperation) *time.Time { return &o.UpdatedAt }),
	optionalMicrosColumn("dispatched_at_us", func(o *forkengine.ForkOperation) **time.Time { return &o.DispatchedAt }),
	optionalMicrosColumn("accepted_at_us", func(o *forkengine.ForkOperation) **time.Time { return &o.AcceptedAt }),
	optionalMicrosColumn("completed_at_us", func(o *forkengine.ForkOperation) **time.Time { return &o.CompletedAt }),
	optionalMicrosColumn("acknowledged_at_us", func(o *forkengine.ForkOperation) **time.Time { return &o.AcknowledgedAt }),
	textColumn("error_reason", func(o *forkengine.ForkOperation) *string { return &o.ErrorReason }),
	intColumn("reconcile_attempts", func(o *forkengine.ForkOperation) *int { return &o.ReconcileAttempts }),
	optionalMicrosColumn("last_reconciled_at_us", func(o *forkengine.ForkOperation) **time.Time { return &o.LastReconciledAt }),
	optionalMicrosColumn("next_reconcile_at_us", func(o *forkengine.ForkOperation) **time.Time { return &o.NextReconcileAt }),
	textColumn("requested_by", func(o *forkengine.ForkOperation) *string { return &o.RequestedBy }),
	textColumn("acknowledged_by", func(o *forkengine.ForkOperation) *string { return &o.AcknowledgedBy }),
	textColumn("lease_owner", func(o *forkengine.ForkOperation) *string { return &o.LeaseOwner }),
	optionalMicrosColumn("lease_expires_at_us", func(o *forkengine.ForkOperation) **time.Time { return &o.LeaseExpiresAt }),
)

// mutableOperations are what the compare-and-swap UPDATE writes: every column but the key, the
// snapshot hash and the target, which, like the snapshot itself, are fixed when the operation is
// inserted, and the lease, written at insert and then only by claims and renewals (leases.go).
var mutableOperations = operationsTable.without("workspace_id", "id", "snapshot_hash", "target", "lease_owner", "lease_expires_at_us")

// encodeTurnBindings is the column value of op's turn bindings: a JSON list, NULL for none.
func encodeTurnBindings(op *forkengine.ForkOperation) (*string, error) {
	if op.TargetTurnBindings == nil {
		return nil, nil
	}
	raw, err := marshalVerbatim(op.TargetTurnBindings)
	if err != nil {
		return nil, fmt.Errorf("encode turn bindings of operation %s: %w", op.ID, err)
	}
	return rawPtr(raw), nil
}

// decodeTurnBindings reads the turn bindings back, an absent binding as nil again.
func decodeTurnBindings(op *forkengine.ForkOperation, text *string) error {
	op.TargetTurnBindings = nil // a fresh slice per row: eachOf reuses op
	if text == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(*text), &op.TargetTurnBindings); err != nil {
		return fmt.Errorf("decode turn bindings of operation %s: %w", op.ID, err)
	}
	for i := range op.TargetTurnBindings {
		op.TargetTurnBindings[i].Binding = nullToNil(op.TargetTurnBindings[i].Binding)
	}
	return nil
}

// nullToNil undoes encoding/json turning an absent RawMessage into "null", so what was nil
// before encoding is nil after decoding.
func nullToNil(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

func dropSnapshotNulls(s *forkengine.Snapshot) {
	s.Session.Settings = nullToNil(s.Session.Settings)
	for i := range s.Turns {
		s.Turns[i].ProviderTurnBinding = nullToNil(s.Turns[i].ProviderTurnBinding)
	}
	if s.Boundary != nil {
		s.Boundary.ProviderTurnBinding = nullToNil(s.Boundary.ProviderTurnBinding)
	}
	for i := range s.Overrides {
		s.Overrides[i].ProviderTurnBinding = nullToNil(s.Overrides[i].ProviderTurnBinding)
	}
}
