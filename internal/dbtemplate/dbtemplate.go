// Package dbtemplate gives tests a fresh SQLite database already at the latest schema without
// migrating each one. Opening a new SQLite file runs every migration of the store, about half of
// the CPU of the store's contract suite, which opens one per subtest, and a good part of the
// resolvers' tests, which open one per API. A test process migrates one file once per key,
// keeps its bytes in memory and writes a copy for each test: the same file a migration of a new
// file leaves, since the same code made it.
//
// Only tests of what a store does on a fresh database take a copy; the tests of the migrations
// themselves (an older schema, a backfill) open their files as they always did.
package dbtemplate

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// template is one key's migrated database: its file's bytes (and its write-ahead log's, if the
// close left one), or the error that making it returned.
type template struct {
	once  sync.Once
	files map[string][]byte // by suffix: "" for the database, "-wal"
	err   error
}

var templates sync.Map // key -> *template

// Copy writes a copy of key's template database to dir/name and returns its path; the first
// call of a key in the process makes the template with create, which must leave a closed
// database at the path it is given (store.Open, then Close). It fails t if create failed.
func Copy(t testing.TB, key, dir, name string, create func(path string) error) string {
	t.Helper()
	v, _ := templates.LoadOrStore(key, &template{})
	tpl := v.(*template)
	tpl.once.Do(func() { tpl.files, tpl.err = build(create) })
	if tpl.err != nil {
		t.Fatalf("dbtemplate %s: %v", key, tpl.err)
	}
	path := filepath.Join(dir, name)
	for suffix, data := range tpl.files {
		if err := os.WriteFile(path+suffix, data, 0o600); err != nil {
			t.Fatalf("dbtemplate %s: %v", key, err)
		}
	}
	return path
}

// build runs create on a file of a temporary directory and reads back what it left.
func build(create func(path string) error) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "dbtemplate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	if err := create(path); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(path + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the template: %w", err)
		}
		if len(data) > 0 || suffix == "" {
			files[suffix] = data
		}
	}
	return files, nil
}
