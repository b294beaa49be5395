package store

import (
	"context"

	"gorm.io/gorm"
)

// The reads a fork makes on every start and commit run fixed SQL scanned by hand, like the hot
// writes (statements.go): gorm's query builder and reflective scanner cost more CPU than SQLite
// did for these small indexed reads. Each scan target list is in the order of its column list.

var (
	sessionSelectList = sessionsTable.list("")

	// The select lists of eachOfWorkspace.
	sessionColumnsOfWorkspace    = sessionsTable.listAfterWorkspace("")
	turnColumnsOfWorkspace       = turnsTable.listAfterWorkspace("")
	qualifiedTurnsOfWorkspace    = turnsTable.listAfterWorkspace("t.")
	qualifiedMessagesOfWorkspace = messagesTable.listAfterWorkspace("m.")
	lineageColumnsOfWorkspace    = lineagesTable.listAfterWorkspace("")
)

// scannable is a row type that can list where each selected column goes.
type scannable[R any] interface {
	*R
	targets() []any
}

// queryRows runs a fixed SELECT (? placeholders) on the handle's connection, past gorm, and
// returns its rows. It is counted as a statement.
func queryRows[R any, P scannable[R]](ctx context.Context, q queries, query string, args ...any) ([]R, error) {
	var out []R
	err := eachRow[R, P](ctx, q, query, args, func(r *R) { out = append(out, *r) })
	return out, err
}

// eachRow runs a fixed SELECT like queryRows and calls fn with each row as it is read, scanned
// into one row value it reuses (fn copies what it keeps; domain() does): the hot reads convert
// rows to domain values without a slice of rows grown beside them, nor a scan target list per
// row. Reuse is safe: Scan assigns every target of every row, fresh strings and pointers
// included.
func eachRow[R any, P scannable[R]](ctx context.Context, q queries, query string, args []any, fn func(*R)) error {
	var r R
	return scanEach(ctx, q, query, args, P(&r).targets(), func() { fn(&r) })
}

// queryAll runs a fixed SELECT of every column of t (? placeholders) and returns its rows as
// domain values. It is counted as a statement.
func queryAll[D any](ctx context.Context, q queries, t table[D], query string, args ...any) ([]D, error) {
	var out []D
	err := eachOf(ctx, q, t, query, args, func(d *D) { out = append(out, *d) })
	return out, err
}

// eachOf runs a fixed SELECT of every column of t and calls fn with each row as it is read,
// scanned into one domain value it reuses (fn copies what it keeps): no slice of rows grows
// beside the caller's, nor a scan target list per row. Reuse is safe: every column's scan
// assigns its field on every row, fresh strings, slices and pointers included.
func eachOf[D any](ctx context.Context, q queries, t table[D], query string, args []any, fn func(*D)) error {
	var d D
	return scanEach(ctx, q, query, args, t.targets(&d), func() { fn(&d) })
}

// eachOfWorkspace is eachOf for a read whose WHERE fixes workspace_id = ws. Its query selects
// every column but workspace_id, the first of every table (listAfterWorkspace), and every row
// gets ws instead: one string per row the driver does not copy out of SQLite and box.
func eachOfWorkspace[D any](ctx context.Context, q queries, t table[D], ws, query string, args []any, fn func(*D)) error {
	var d D
	targets := t.targets(&d)
	workspace, ok := targets[0].(*string)
	if !ok {
		panic("store: the first scan target of table " + t.name + " is not a string")
	}
	*workspace = ws
	return scanEach(ctx, q, query, args, targets[1:], func() { fn(&d) })
}

func scanEach(ctx context.Context, q queries, query string, args, targets []any, each func()) error {
	return q.scanRows(ctx, q.db.Statement.ConnPool, query, args, targets, each)
}

// scanRows runs query on pool (the store's pool, or a transaction's connection), counting it,
// scanning each row into targets and calling each.
func (q queries) scanRows(ctx context.Context, pool gorm.ConnPool, query string, args, targets []any, each func()) error {
	q.statements.Add(1)
	rows, err := pool.QueryContext(ctx, q.dialect.placeholders(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := int64(0)
	if q.rows != nil {
		defer func() { q.rows.Add(n) }()
	}
	for rows.Next() {
		if err := rows.Scan(targets...); err != nil {
			return err
		}
		n++
		each()
	}
	return rows.Err()
}

// inList is "(?, ?, ...)" for n values, and the arguments that go with it after the prefix ones.
// On SQLite it is "(SELECT value FROM json_each(?))" and the ids one JSON array (idList).
func (q queries) inList(ids []string, prefix ...any) (string, []any) {
	if q.dialect.jsonIDLists {
		return "(SELECT value FROM json_each(?))", append(append(make([]any, 0, len(prefix)+1), prefix...), idList(ids))
	}
	args := append(make([]any, 0, len(prefix)+len(ids)), prefix...)
	for _, id := range ids {
		args = append(args, id)
	}
	return placeholders(len(ids)), args
}

// idList is ids as one JSON array, which SQLite's json_each reads back as rows of text: one
// bound value for a list instead of one per id. Binding a page's hundred ids one by one and
// building the IN list's temporary b-tree (or the VALUES of idsCTE) from them cost SQLite more
// than reading the hundred rows (the latest turns of a page: 0.90 ms of CPU against 0.68 ms with
// json_each, BenchmarkListQueryReads), and every id boxed into an argument was an allocation.
func idList(ids []string) string {
	n := 2
	for _, id := range ids {
		n += len(id) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, id)
	}
	return string(append(b, ']'))
}

// appendJSONString appends s as a JSON string: quotes, backslashes and control characters
// escaped, everything else as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// queryStrings runs a fixed single-column query (? placeholders) past gorm and returns its
// values; it is counted.
func (q queries) queryStrings(ctx context.Context, query string, args ...any) ([]string, error) {
	var v string
	var out []string
	err := scanEach(ctx, q, query, args, []any{&v}, func() { out = append(out, v) })
	return out, err
}

// queryInt runs a fixed single-value query (? placeholders) past gorm; it is counted.
func (q queries) queryInt(ctx context.Context, query string, args ...any) (int64, error) {
	q.statements.Add(1)
	var n int64
	err := q.db.Statement.ConnPool.QueryRowContext(ctx, q.dialect.placeholders(query), args...).Scan(&n)
	return n, err
}
