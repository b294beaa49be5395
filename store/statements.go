package store

import (
	"strings"
	"sync"
)

// The hot writes (sessions, turns, messages, events: a fork commit writes dozens of them) run
// fixed SQL built once here instead of through gorm's reflective builder: with SQLite's
// per-connection statement cache that halves their CPU cost. Each column list is in the order of
// its row's values() method.

var (
	sessionColumns = []string{"workspace_id", "id", "kind", "provider", "provider_session_id", "title",
		"rail_section_key", "cwd", "model", "settings", "visible", "created_at_us", "updated_at_us", "deleted_at_us"}
	turnColumns = []string{"workspace_id", "id", "session_id", "sequence", "phase", "outcome", "origin",
		"started_at_us", "settled_at_us", "updated_at_us", "provider_turn_id", "provider_turn_binding"}
	messageColumns = []string{"workspace_id", "id", "session_id", "turn_id", "position", "role", "content", "created_at_us"}
	eventColumns   = []string{"cursor", "workspace_id", "kind", "session_id", "turn_id", "operation_id", "status", "occurred_at_us"}
)

var (
	upsertSessionSQL = upsertSQL("sessions", sessionColumns, "workspace_id", "id")
	upsertTurnSQL    = upsertSQL("turns", turnColumns, "workspace_id", "id")
	turnSelectList   = strings.Join(turnColumns, ", ")
)

func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// upsertSQL inserts one row or, when its key exists, overwrites every other column.
func upsertSQL(table string, cols []string, keys ...string) string {
	var set []string
	for _, c := range cols {
		if !contains(keys, c) {
			set = append(set, c+" = excluded."+c)
		}
	}
	return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " + placeholders(len(cols)) +
		" ON CONFLICT (" + strings.Join(keys, ", ") + ") DO UPDATE SET " + strings.Join(set, ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

type multiInsertKey struct {
	table string
	rows  int
}

var multiInserts sync.Map // multiInsertKey → string

// insertSQL inserts rows rows in one statement. The text is cached per row count, so repeated
// batches of one size reuse the prepared statement.
func insertSQL(table string, cols []string, rows int) string {
	key := multiInsertKey{table, rows}
	if s, ok := multiInserts.Load(key); ok {
		return s.(string)
	}
	values := strings.TrimSuffix(strings.Repeat(placeholders(len(cols))+", ", rows), ", ")
	s := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " + values
	multiInserts.Store(key, s)
	return s
}

func (r sessionRow) values() []any {
	return []any{r.WorkspaceID, r.ID, r.Kind, r.Provider, r.ProviderSessionID, r.Title, r.RailSectionKey,
		r.Cwd, r.Model, r.Settings, r.Visible, r.CreatedAtUs, r.UpdatedAtUs, r.DeletedAtUs}
}

func (r turnRow) values() []any {
	return []any{r.WorkspaceID, r.ID, r.SessionID, r.Sequence, r.Phase, r.Outcome, r.Origin,
		r.StartedAtUs, r.SettledAtUs, r.UpdatedAtUs, r.ProviderTurnID, r.ProviderTurnBinding}
}

func (r messageRow) values() []any {
	return []any{r.WorkspaceID, r.ID, r.SessionID, r.TurnID, r.Position, r.Role, r.Content, r.CreatedAtUs}
}

func (r eventRow) values() []any {
	return []any{r.Cursor, r.WorkspaceID, r.Kind, r.SessionID, r.TurnID, r.OperationID, r.Status, r.OccurredAtUs}
}

// insertRows writes rows with one INSERT per batch of at most insertBatch rows.
func insertRows[R interface{ values() []any }](exec func(sql string, args ...any) error, table string, cols []string, rows []R) error {
	for start := 0; start < len(rows); start += insertBatch {
		batch := rows[start:min(start+insertBatch, len(rows))]
		args := make([]any, 0, len(batch)*len(cols))
		for _, r := range batch {
			args = append(args, r.values()...)
		}
		if err := exec(insertSQL(table, cols, len(batch)), args...); err != nil {
			return err
		}
	}
	return nil
}
