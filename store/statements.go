package store

import (
	"slices"
	"strconv"
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
	// A turn never changes session: on an id taken by a turn of another session the upsert writes
	// no row (UpsertTurn's ErrDuplicate), where overwriting session_id would move the turn.
	upsertTurnSQL  = upsertSQL("turns", turnColumns, "workspace_id", "id") + " WHERE turns.session_id = excluded.session_id"
	turnSelectList = strings.Join(turnColumns, ", ")
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
	table  string
	rows   int
	shared bool
}

var multiInserts sync.Map // multiInsertKey → string

// insertSQL inserts rows rows in one statement. The text is cached per row count, so repeated
// batches of one size reuse the prepared statement.
func insertSQL(table string, cols []string, rows int) string {
	key := multiInsertKey{table, rows, false}
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

func (r turnRow) values() []any { return r.appendValues(nil) }

// appendValues appends the row's values in column order: a batch insert appends every row into
// one argument list instead of building a slice per row.
func (r turnRow) appendValues(dst []any) []any {
	return append(dst, r.WorkspaceID, r.ID, r.SessionID, r.Sequence, r.Phase, r.Outcome, r.Origin,
		r.StartedAtUs, r.SettledAtUs, r.UpdatedAtUs, r.ProviderTurnID, r.ProviderTurnBinding)
}

func (r messageRow) appendValues(dst []any) []any {
	return append(dst, r.WorkspaceID, r.ID, r.SessionID, r.TurnID, r.Position, r.Role, r.Content, r.CreatedAtUs)
}

func (r eventRow) appendValues(dst []any) []any {
	return append(dst, r.Cursor, r.WorkspaceID, r.Kind, r.SessionID, r.TurnID, r.OperationID, r.Status, r.OccurredAtUs)
}

// sharedKeyColumns are the columns of turnColumns and messageColumns that a batch copied into
// one session has in common: workspace_id and session_id.
var sharedKeyColumns = [2]int{0, 2}

// insertSharedSQL is insertSQL for rows that all have the same values in sharedKeyColumns: those
// are bound once, as ?1 and ?2, and every row names them (SQLite's numbered parameters), so a
// fork's 100 copied messages bind 600 values instead of 800. Each bound value is a call into the
// SQLite driver and a copy of the string.
func insertSharedSQL(table string, cols []string, rows int) string {
	key := multiInsertKey{table, rows, true}
	if s, ok := multiInserts.Load(key); ok {
		return s.(string)
	}
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
	next := len(sharedKeyColumns) + 1
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			if k := slices.Index(sharedKeyColumns[:], c); k >= 0 {
				b.WriteString("?" + strconv.Itoa(k+1))
				continue
			}
			b.WriteString("?" + strconv.Itoa(next))
			next++
		}
		b.WriteByte(')')
	}
	multiInserts.Store(key, b.String())
	return b.String()
}

// insertRows writes rows with one INSERT per batch of at most insertBatch rows. With shareKeys
// (turns and messages, on a dialect with numbered parameters) a batch whose rows agree in
// sharedKeyColumns binds those once (insertSharedSQL).
func insertRows[R interface{ appendValues([]any) []any }](exec func(sql string, args ...any) error, table string, cols []string, rows []R, shareKeys bool) error {
	var row []any // one row's values, reused
	for start := 0; start < len(rows); start += insertBatch {
		batch := rows[start:min(start+insertBatch, len(rows))]
		if shareKeys {
			if args, ok := sharedKeyArgs(batch, &row, len(cols)); ok {
				if err := exec(insertSharedSQL(table, cols, len(batch)), args...); err != nil {
					return err
				}
				continue
			}
		}
		args := make([]any, 0, len(batch)*len(cols))
		for _, r := range batch {
			args = r.appendValues(args)
		}
		if err := exec(insertSQL(table, cols, len(batch)), args...); err != nil {
			return err
		}
	}
	return nil
}

// sharedKeyArgs builds insertSharedSQL's arguments for batch (the values of sharedKeyColumns
// once, then every row without them), or reports false when the rows do not all agree in them.
func sharedKeyArgs[R interface{ appendValues([]any) []any }](batch []R, row *[]any, width int) ([]any, bool) {
	args := make([]any, len(sharedKeyColumns), len(sharedKeyColumns)+len(batch)*(width-len(sharedKeyColumns)))
	for i, r := range batch {
		*row = r.appendValues((*row)[:0])
		for k, c := range sharedKeyColumns {
			if i == 0 {
				args[k] = (*row)[c]
			} else if (*row)[c] != args[k] {
				return nil, false
			}
		}
		for c, v := range *row {
			if !slices.Contains(sharedKeyColumns[:], c) {
				args = append(args, v)
			}
		}
	}
	return args, true
}
