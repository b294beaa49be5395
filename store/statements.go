package store

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The writes run fixed SQL built once here from the table descriptions (rows.go) instead of
// through gorm's reflective builder: with SQLite's per-connection statement cache that halves
// their CPU cost.

var (
	upsertSessionSQL = sessionsTable.upsertSQL()
	// A turn never changes session: on an id taken by a turn of another session the upsert writes
	// no row (UpsertTurn's ErrDuplicate), where overwriting session_id would move the turn.
	upsertTurnSQL  = turnsTable.upsertSQL() + " WHERE turns.session_id = excluded.session_id"
	turnSelectList = turnsTable.list("")
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

// cachedSQL is the statement cache holds for key, built by build the first time: a statement
// built from a few parameters (a row count, a dialect, which parts it has) is built once, not on
// every read (a page's read spent a twentieth of its CPU concatenating the same SQL again).
func cachedSQL[K comparable](cache *sync.Map, key K, build func() string) string {
	if s, ok := cache.Load(key); ok {
		return s.(string)
	}
	s := build()
	cache.Store(key, s)
	return s
}

// insertSQL inserts rows rows in one statement. The text is cached per row count, so repeated
// batches of one size reuse the prepared statement.
func insertSQL(table string, cols []string, rows int) string {
	return cachedSQL(&multiInserts, multiInsertKey{table, rows, false}, func() string {
		values := strings.TrimSuffix(strings.Repeat(placeholders(len(cols))+", ", rows), ", ")
		return "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES " + values
	})
}

// sharedKeyColumns are the columns of turnsTable and messagesTable that a batch copied into one
// session has in common: workspace_id and session_id.
var sharedKeyColumns = [2]int{0, 2}

func init() {
	for _, t := range [][]string{turnsTable.names, messagesTable.names} {
		if t[sharedKeyColumns[0]] != "workspace_id" || t[sharedKeyColumns[1]] != "session_id" {
			panic("store: sharedKeyColumns do not name workspace_id and session_id")
		}
	}
}

// insertSharedSQL is insertSQL for rows that all have the same values in sharedKeyColumns: those
// are bound once, as ?1 and ?2, and every row names them (SQLite's numbered parameters), so a
// fork's 100 copied messages bind 600 values instead of 800. Each bound value is a call into the
// SQLite driver and a copy of the string.
func insertSharedSQL(table string, cols []string, rows int) string {
	return cachedSQL(&multiInserts, multiInsertKey{table, rows, true}, func() string { return buildInsertSharedSQL(table, cols, rows) })
}

func buildInsertSharedSQL(table string, cols []string, rows int) string {
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
	return b.String()
}

// insertRows writes rows of t with one INSERT per batch of at most insertBatch rows. With
// shareKeys (turns and messages, on a dialect with numbered parameters) a batch whose rows agree
// in sharedKeyColumns binds those once (insertSharedSQL).
func insertRows[D any](exec func(sql string, args ...any) error, t table[D], rows []D, shareKeys bool) error {
	var row []any // one row's values, reused
	cols := t.names
	for start := 0; start < len(rows); start += insertBatch {
		batch := rows[start:min(start+insertBatch, len(rows))]
		if shareKeys {
			if args, ok := sharedKeyArgs(t, batch, &row); ok {
				if err := exec(insertSharedSQL(t.name, cols, len(batch)), args...); err != nil {
					return err
				}
				continue
			}
		}
		args := make([]any, 0, len(batch)*len(cols))
		for i := range batch {
			args = t.appendValues(args, &batch[i])
		}
		if err := exec(insertSQL(t.name, cols, len(batch)), args...); err != nil {
			return err
		}
	}
	return nil
}

// sharedKeyArgs builds insertSharedSQL's arguments for batch (the values of sharedKeyColumns
// once, then every row without them), or reports false when the rows do not all agree in them.
func sharedKeyArgs[D any](t table[D], batch []D, row *[]any) ([]any, bool) {
	width := len(t.columns)
	args := make([]any, len(sharedKeyColumns), len(sharedKeyColumns)+len(batch)*(width-len(sharedKeyColumns)))
	for i := range batch {
		*row = t.appendValues((*row)[:0], &batch[i])
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
