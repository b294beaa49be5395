package main

import (
	"database/sql"
	"fmt"
	"sort"

	_ "github.com/mattn/go-sqlite3" // the driver the server uses, read-only here
)

// fileSize is the size of a closed SQLite database: its pages, and with dbstat the bytes of
// each table and index (payload, b-tree overhead and unused space of their pages).
type fileSize struct {
	pages, pageSize, free int64
	byName                map[string]int64 // nil without dbstat
	rows                  map[string]int64 // rows per table
}

func (s fileSize) bytes() int64 { return s.pages * s.pageSize }

// measureFile reads the file after the server closed it (its WAL checkpointed into it).
func measureFile(path string) (fileSize, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return fileSize{}, err
	}
	defer db.Close()
	var s fileSize
	for _, p := range []struct {
		pragma string
		into   *int64
	}{{"page_count", &s.pages}, {"page_size", &s.pageSize}, {"freelist_count", &s.free}} {
		if err := db.QueryRow("PRAGMA " + p.pragma).Scan(p.into); err != nil {
			return fileSize{}, fmt.Errorf("PRAGMA %s: %w", p.pragma, err)
		}
	}
	if s.rows, err = tableRows(db); err != nil {
		return fileSize{}, err
	}
	s.byName = map[string]int64{}
	rows, err := db.Query("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
	if err != nil {
		s.byName = nil // built without -tags sqlite_dbstat
		return s, nil
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return fileSize{}, err
		}
		s.byName[name] = n
	}
	return s, rows.Err()
}

// tableRows counts the rows of every table.
func tableRows(db *sql.DB) (map[string]int64, error) {
	names, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		return nil, err
	}
	var tables []string
	for names.Next() {
		var n string
		if err := names.Scan(&n); err != nil {
			names.Close()
			return nil, err
		}
		tables = append(tables, n)
	}
	names.Close()
	out := map[string]int64{}
	for _, t := range tables {
		var n int64
		if err := db.QueryRow(`SELECT COUNT(*) FROM "` + t + `"`).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// growth lists, largest first, what each table and index grew by.
func growth(before, after map[string]int64) []struct {
	name  string
	bytes int64
} {
	var out []struct {
		name  string
		bytes int64
	}
	for name, n := range after {
		if d := n - before[name]; d != 0 {
			out = append(out, struct {
				name  string
				bytes int64
			}{name, d})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].bytes > out[j].bytes })
	return out
}
