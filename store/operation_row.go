package store

import (
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

type operationRow struct {
	WorkspaceID               string  `gorm:"column:workspace_id;primaryKey"`
	ID                        string  `gorm:"column:id;primaryKey"`
	RequestID                 string  `gorm:"column:request_id"`
	RequestHash               string  `gorm:"column:request_hash"`
	SourceSessionID           string  `gorm:"column:source_session_id"`
	TargetSessionID           string  `gorm:"column:target_session_id"`
	ThroughTurnID             string  `gorm:"column:through_turn_id"`
	TargetTurnID              string  `gorm:"column:target_turn_id"`
	SourceProviderSessionID   string  `gorm:"column:source_provider_session_id"`
	SourceProviderTurnID      string  `gorm:"column:source_provider_turn_id"`
	SourceProviderTurnBinding *string `gorm:"column:source_provider_turn_binding"`
	Provider                  string  `gorm:"column:provider"`
	DriverKind                string  `gorm:"column:driver_kind"`
	DriverVersion             string  `gorm:"column:driver_version"`
	Status                    string  `gorm:"column:status"`
	Error                     string  `gorm:"column:error"`
	TargetTitle               string  `gorm:"column:target_title"`
	TargetProviderSessionID   string  `gorm:"column:target_provider_session_id"`
	StateBindingMode          string  `gorm:"column:state_binding_mode"`
	TargetTurnBindings        *string `gorm:"column:target_turn_bindings"`
	Receipt                   string  `gorm:"column:receipt"`
	SnapshotHash              string  `gorm:"column:snapshot_hash"`
	Target                    *string `gorm:"column:target"`
	CreatedAtUs               int64   `gorm:"column:created_at_us"`
	UpdatedAtUs               int64   `gorm:"column:updated_at_us"`
	DispatchedAtUs            *int64  `gorm:"column:dispatched_at_us"`
	AcceptedAtUs              *int64  `gorm:"column:accepted_at_us"`
	CompletedAtUs             *int64  `gorm:"column:completed_at_us"`
	AcknowledgedAtUs          *int64  `gorm:"column:acknowledged_at_us"`
	ErrorReason               string  `gorm:"column:error_reason"`
	ReconcileAttempts         int64   `gorm:"column:reconcile_attempts"`
	LastReconciledAtUs        *int64  `gorm:"column:last_reconciled_at_us"`
	NextReconcileAtUs         *int64  `gorm:"column:next_reconcile_at_us"`
	RequestedBy               string  `gorm:"column:requested_by"`
	AcknowledgedBy            string  `gorm:"column:acknowledged_by"`
	LeaseOwner                string  `gorm:"column:lease_owner"`
	LeaseExpiresAtUs          *int64  `gorm:"column:lease_expires_at_us"`
}

func (operationRow) TableName() string { return "fork_operations" }

// mutableOperationColumns are what the compare-and-swap UPDATE writes: every column but the key,
// the snapshot hash and the target, which, like the snapshot itself, are fixed when the operation
// is inserted.
var mutableOperationColumns = []string{
	"request_id", "request_hash", "source_session_id", "target_session_id", "through_turn_id",
	"target_turn_id", "source_provider_session_id", "source_provider_turn_id",
	"source_provider_turn_binding", "provider", "driver_kind", "driver_version", "status", "error",
	"target_title", "target_provider_session_id", "state_binding_mode", "target_turn_bindings",
	"receipt", "created_at_us", "updated_at_us", "dispatched_at_us",
	"accepted_at_us", "completed_at_us", "acknowledged_at_us",
	"error_reason", "reconcile_attempts", "last_reconciled_at_us", "next_reconcile_at_us",
	"requested_by", "acknowledged_by",
}

// operationColumns are every column of the row, in the order of operationRow.values. The lease
// columns are written at insert and then only by claims and renewals (leases.go).
var operationColumns = append(append([]string{"workspace_id", "id", "snapshot_hash", "target"}, mutableOperationColumns...),
	"lease_owner", "lease_expires_at_us")

// mutableValues are the values of mutableOperationColumns, in order.
func (r operationRow) mutableValues() []any {
	return []any{r.RequestID, r.RequestHash, r.SourceSessionID, r.TargetSessionID, r.ThroughTurnID,
		r.TargetTurnID, r.SourceProviderSessionID, r.SourceProviderTurnID,
		r.SourceProviderTurnBinding, r.Provider, r.DriverKind, r.DriverVersion, r.Status, r.Error,
		r.TargetTitle, r.TargetProviderSessionID, r.StateBindingMode, r.TargetTurnBindings,
		r.Receipt, r.CreatedAtUs, r.UpdatedAtUs, r.DispatchedAtUs,
		r.AcceptedAtUs, r.CompletedAtUs, r.AcknowledgedAtUs,
		r.ErrorReason, r.ReconcileAttempts, r.LastReconciledAtUs, r.NextReconcileAtUs,
		r.RequestedBy, r.AcknowledgedBy}
}

func (r operationRow) values() []any {
	return append(append([]any{r.WorkspaceID, r.ID, r.SnapshotHash, r.Target}, r.mutableValues()...), r.LeaseOwner, r.LeaseExpiresAtUs)
}

// toOperationRow maps every field but the snapshot, which has a table of its own.
func toOperationRow(op forkengine.ForkOperation) (operationRow, error) {
	var bindings *string
	if op.TargetTurnBindings != nil {
		raw, err := marshalVerbatim(op.TargetTurnBindings)
		if err != nil {
			return operationRow{}, fmt.Errorf("encode turn bindings of operation %s: %w", op.ID, err)
		}
		bindings = rawPtr(raw)
	}
	target, err := encodeTarget(op)
	if err != nil {
		return operationRow{}, err
	}
	return operationRow{
		Target:      target,
		WorkspaceID: op.WorkspaceID, ID: op.ID, RequestID: op.RequestID, RequestHash: op.RequestHash,
		SourceSessionID: op.SourceSessionID, TargetSessionID: op.TargetSessionID,
		ThroughTurnID: op.ThroughTurnID, TargetTurnID: op.TargetTurnID,
		SourceProviderSessionID: op.SourceProviderSessionID, SourceProviderTurnID: op.SourceProviderTurnID,
		SourceProviderTurnBinding: rawPtr(op.SourceProviderTurnBinding),
		Provider:                  op.Provider, DriverKind: op.DriverKind, DriverVersion: op.DriverVersion,
		Status: string(op.Status), Error: op.Error, TargetTitle: op.TargetTitle,
		TargetProviderSessionID: op.TargetProviderSessionID, StateBindingMode: string(op.StateBindingMode),
		TargetTurnBindings: bindings, Receipt: op.Receipt, SnapshotHash: op.SnapshotHash,
		CreatedAtUs: micros(op.CreatedAt), UpdatedAtUs: micros(op.UpdatedAt),
		DispatchedAtUs: microsPtr(op.DispatchedAt), AcceptedAtUs: microsPtr(op.AcceptedAt),
		CompletedAtUs: microsPtr(op.CompletedAt), AcknowledgedAtUs: microsPtr(op.AcknowledgedAt),
		LeaseOwner: op.LeaseOwner, LeaseExpiresAtUs: microsPtr(op.LeaseExpiresAt),
		ErrorReason: op.ErrorReason, ReconcileAttempts: int64(op.ReconcileAttempts),
		LastReconciledAtUs: microsPtr(op.LastReconciledAt), NextReconcileAtUs: microsPtr(op.NextReconcileAt),
		RequestedBy: op.RequestedBy, AcknowledgedBy: op.AcknowledgedBy,
	}, nil
}

// domain maps the row back; the snapshot is attached separately (attachSnapshots).
func (r operationRow) domain() (forkengine.ForkOperation, error) {
	op := forkengine.ForkOperation{
		WorkspaceID: r.WorkspaceID, ID: r.ID, RequestID: r.RequestID, RequestHash: r.RequestHash,
		SourceSessionID: r.SourceSessionID, TargetSessionID: r.TargetSessionID,
		ThroughTurnID: r.ThroughTurnID, TargetTurnID: r.TargetTurnID,
		SourceProviderSessionID: r.SourceProviderSessionID, SourceProviderTurnID: r.SourceProviderTurnID,
		SourceProviderTurnBinding: fromRawPtr(r.SourceProviderTurnBinding),
		Provider:                  r.Provider, DriverKind: r.DriverKind, DriverVersion: r.DriverVersion,
		Status: forkengine.OperationStatus(r.Status), Error: r.Error, TargetTitle: r.TargetTitle,
		TargetProviderSessionID: r.TargetProviderSessionID, StateBindingMode: forkengine.BindingMode(r.StateBindingMode),
		Receipt: r.Receipt, SnapshotHash: r.SnapshotHash,
		CreatedAt: fromMicros(r.CreatedAtUs), UpdatedAt: fromMicros(r.UpdatedAtUs),
		DispatchedAt: fromMicrosPtr(r.DispatchedAtUs), AcceptedAt: fromMicrosPtr(r.AcceptedAtUs),
		CompletedAt: fromMicrosPtr(r.CompletedAtUs), AcknowledgedAt: fromMicrosPtr(r.AcknowledgedAtUs),
		LeaseOwner: r.LeaseOwner, LeaseExpiresAt: fromMicrosPtr(r.LeaseExpiresAtUs),
		ErrorReason: r.ErrorReason, ReconcileAttempts: int(r.ReconcileAttempts),
		LastReconciledAt: fromMicrosPtr(r.LastReconciledAtUs), NextReconcileAt: fromMicrosPtr(r.NextReconcileAtUs),
		RequestedBy: r.RequestedBy, AcknowledgedBy: r.AcknowledgedBy,
	}
	target, err := decodeTarget(r.ID, r.Target)
	if err != nil {
		return op, err
	}
	op.Target = target
	if r.TargetTurnBindings != nil {
		if err := json.Unmarshal([]byte(*r.TargetTurnBindings), &op.TargetTurnBindings); err != nil {
			return op, fmt.Errorf("decode turn bindings of operation %s: %w", r.ID, err)
		}
	}
	for i := range op.TargetTurnBindings {
		op.TargetTurnBindings[i].Binding = nullToNil(op.TargetTurnBindings[i].Binding)
	}
	return op, nil
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
