package store

import (
	"context"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The reads a fork makes on every start and commit run fixed SQL scanned by hand, like the hot
// writes (statements.go): gorm's query builder and reflective scanner cost more CPU than SQLite
// did for these small indexed reads. Each scan target list is in the order of its column list.

var (
	lineageColumns = []string{"workspace_id", "target_session_id", "operation_id", "source_session_id",
		"source_turn_id", "target_turn_id", "forked_at_us"}
	lineageSelectList   = strings.Join(lineageColumns, ", ")
	sessionSelectList   = strings.Join(sessionColumns, ", ")
	messageSelectList   = strings.Join(messageColumns, ", ")
	operationSelectList = strings.Join(operationColumns, ", ")
)

func (r *sessionRow) targets() []any {
	return []any{&r.WorkspaceID, &r.ID, &r.Kind, &r.Provider, &r.ProviderSessionID, &r.Title, &r.RailSectionKey,
		&r.Cwd, &r.Model, &r.Settings, &r.Visible, &r.CreatedAtUs, &r.UpdatedAtUs, &r.DeletedAtUs}
}

func (r *turnRow) targets() []any {
	return []any{&r.WorkspaceID, &r.ID, &r.SessionID, &r.Sequence, &r.Phase, &r.Outcome, &r.Origin,
		&r.StartedAtUs, &r.SettledAtUs, &r.UpdatedAtUs, &r.ProviderTurnID, &r.ProviderTurnBinding}
}

func (r *messageRow) targets() []any {
	return []any{&r.WorkspaceID, &r.ID, &r.SessionID, &r.TurnID, &r.Position, &r.Role, &r.Content, &r.CreatedAtUs}
}

func (r *lineageRow) targets() []any {
	return []any{&r.WorkspaceID, &r.TargetSessionID, &r.OperationID, &r.SourceSessionID, &r.SourceTurnID,
		&r.TargetTurnID, &r.ForkedAtUs}
}

func (r *operationRow) targets() []any {
	return []any{&r.WorkspaceID, &r.ID, &r.SnapshotHash, &r.RequestID, &r.RequestHash, &r.SourceSessionID,
		&r.TargetSessionID, &r.ThroughTurnID, &r.TargetTurnID, &r.SourceProviderSessionID, &r.SourceProviderTurnID,
		&r.SourceProviderTurnBinding, &r.Provider, &r.DriverKind, &r.DriverVersion, &r.Status, &r.Error,
		&r.TargetTitle, &r.TargetProviderSessionID, &r.StateBindingMode, &r.TargetTurnBindings,
		&r.Receipt, &r.CreatedAtUs, &r.UpdatedAtUs, &r.DispatchedAtUs,
		&r.AcceptedAtUs, &r.CompletedAtUs, &r.AcknowledgedAtUs, &r.ErrorReason, &r.ReconcileAttempts,
		&r.LastReconciledAtUs, &r.NextReconcileAtUs, &r.LeaseOwner, &r.LeaseExpiresAtUs}
}

// scannable is a row type that can list where each selected column goes.
type scannable[R any] interface {
	*R
	targets() []any
}

// queryRows runs a fixed SELECT (? placeholders) on the handle's connection, past gorm, and
// returns its rows. It is counted as a statement.
func queryRows[R any, P scannable[R]](ctx context.Context, q queries, query string, args ...any) ([]R, error) {
	q.statements.Add(1)
	rows, err := q.db.Statement.ConnPool.QueryContext(ctx, q.dialect.placeholders(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []R
	for rows.Next() {
		var r R
		if err := rows.Scan(P(&r).targets()...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// inList is "(?, ?, ...)" for n values, and the arguments that go with it after the prefix ones.
func inList(ids []string, prefix ...any) (string, []any) {
	args := append(make([]any, 0, len(prefix)+len(ids)), prefix...)
	for _, id := range ids {
		args = append(args, id)
	}
	return placeholders(len(ids)), args
}

// queryInt runs a fixed single-value query (? placeholders) past gorm; it is counted.
func (q queries) queryInt(ctx context.Context, query string, args ...any) (int64, error) {
	q.statements.Add(1)
	var n int64
	err := q.db.Statement.ConnPool.QueryRowContext(ctx, q.dialect.placeholders(query), args...).Scan(&n)
	return n, err
}

// operationsWhere reads the operations a fixed WHERE clause selects, with their snapshots.
func (q queries) operationsWhere(ctx context.Context, where string, args ...any) ([]forkengine.ForkOperation, error) {
	rows, err := queryRows[operationRow](ctx, q, "SELECT "+operationSelectList+" FROM fork_operations WHERE "+where, args...)
	if err != nil {
		return nil, err
	}
	ops := make([]forkengine.ForkOperation, len(rows))
	for i, r := range rows {
		if ops[i], err = r.domain(); err != nil {
			return nil, err
		}
	}
	return ops, q.attachSnapshots(ctx, ops)
}
