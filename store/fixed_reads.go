package store

import (
	"context"
	"strings"
)

// The reads a fork makes on every start and commit run fixed SQL scanned by hand, like the hot
// writes (statements.go): gorm's query builder and reflective scanner cost more CPU than SQLite
// did for these small indexed reads. Each scan target list is in the order of its column list.

var (
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

func (r *operationRow) targets() []any {
	return []any{&r.WorkspaceID, &r.ID, &r.SnapshotHash, &r.RequestID, &r.RequestHash, &r.SourceSessionID,
		&r.TargetSessionID, &r.ThroughTurnID, &r.TargetTurnID, &r.SourceProviderSessionID, &r.SourceProviderTurnID,
		&r.SourceProviderTurnBinding, &r.Provider, &r.DriverKind, &r.DriverVersion, &r.Status, &r.Error,
		&r.TargetTitle, &r.TargetProviderSessionID, &r.StateBindingMode, &r.TargetTurnBindings,
		&r.Receipt, &r.CreatedAtUs, &r.UpdatedAtUs, &r.DispatchedAtUs,
		&r.AcceptedAtUs, &r.CompletedAtUs, &r.AcknowledgedAtUs}
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
