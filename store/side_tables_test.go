package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// entityTableNames are the tables described with newTable in rows.go, operation_row.go,
// history.go and interactions.go; sideTableNames those of side_tables.go.
var (
	entityTableNames = []string{sessionsTable.name, turnsTable.name, messagesTable.name, lineagesTable.name,
		eventLogTable.name, operationsTable.name, historiesTable.name, segmentsTable.name, interactionsTable.name,
		auditMessagesTable.name}
	sideTableNames = []string{countersTable.name, forkFamiliesTable.name, snapshotsTable.name,
		providerSessionsTable.name, serverKeysTable.name, sessionCountsTable.name, termsTable.name,
		termCountsTable.name, turnCountsTable.name, submissionsTable.name, workspaceSettingsTable.name}
)

// The shapes of SQL that spell a described table's columns by hand (table stands for the
// table's name): an insert's column list and a counter bumped as "t.n + excluded.n", for every
// described table; a select of two or more plain columns, for the side tables (reads of a
// few entity columns, such as a search page's titles, are still written out).
var (
	writeShapes = []string{`\b(INSERT|REPLACE) INTO table \(`, `\btable\.\w+ \+ excluded\.`}
	readShapes  = []string{`\bSELECT (\w+\.)?\w+(, (\w+\.)?\w+)+ FROM table\b`}
)

// columnListExempt are the places that may spell a described table's columns: the migrations
// (their DDL, backfills and triggers keep their text), the SQLite message-count trigger body
// (message_counts.go, whose SQL other work owns; it writes turn_counts.messages) and the search
// read of the lead word's index rows (search.go, likewise).
var columnListExempt = map[string]bool{"migrations.go": true, "message_counts.go:sqliteMessageBumpSQL": true,
	"search.go:leadRows": true}

// handWrittenColumnList returns the first shape of handWrittenColumns that sql has for a
// described table, or "".
func handWrittenColumnList(sql string, patterns []*regexp.Regexp) string {
	sql = strings.Join(strings.Fields(sql), " ")
	sql = strings.ReplaceAll(strings.ReplaceAll(sql, "( ", "("), " )", ")")
	if strings.HasPrefix(sql, "CREATE ") { // DDL, and the trigger functions' SQL bodies
		return ""
	}
	for _, p := range patterns {
		if m := p.FindString(sql); m != "" {
			return m
		}
	}
	return ""
}

func columnListPatterns() []*regexp.Regexp {
	var out []*regexp.Regexp
	add := func(tables, shapes []string) {
		for _, table := range tables {
			for _, shape := range shapes {
				out = append(out, regexp.MustCompile(strings.ReplaceAll(shape, "table", regexp.QuoteMeta(table))))
			}
		}
	}
	add(entityTableNames, writeShapes)
	add(sideTableNames, writeShapes)
	add(sideTableNames, readShapes)
	return out
}

// TestNoHandWrittenColumnListOfADescribedTable parses store's Go files: no string literal outside
// the descriptions' derivations and the exempt places spells a column list of a described
// table, so each table's columns are named in its description alone.
func TestNoHandWrittenColumnListOfADescribedTable(t *testing.T) {
	t.Parallel()
	patterns := columnListPatterns()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") || columnListExempt[path] {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && columnListExempt[path+":"+fn.Name.Name] {
				continue
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				text, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
				}
				checked++
				if m := handWrittenColumnList(text, patterns); m != "" {
					t.Errorf("%s: %q spells a described table's columns by hand; derive it from the table's description",
						fset.Position(lit.Pos()), m)
				}
				return true
			})
		}
	}
	if checked < 500 {
		t.Fatalf("checked %d string literals: the walk missed store's files", checked)
	}
}

// TestHandWrittenColumnListIsFound holds the matcher of the test above to the shapes it must
// catch, and to what it must let through.
func TestHandWrittenColumnListIsFound(t *testing.T) {
	t.Parallel()
	patterns := columnListPatterns()
	for _, sql := range []string{
		"INSERT INTO counters (scope, name, value) VALUES (?, ?, ?)",
		"REPLACE INTO fork_operation_snapshots (workspace_id, operation_id, snapshot) VALUES (?, ?, ?)",
		"SELECT workspace_id, forking_disabled, updated_at_us FROM workspace_settings WHERE workspace_id IN ",
		"SELECT operation_id, snapshot\n\t\tFROM fork_operation_snapshots WHERE",
		") ON CONFLICT (workspace_id, session_id) DO UPDATE SET n = turn_counts.n + excluded.n;",
		"INSERT INTO sessions (workspace_id, id) VALUES ",
	} {
		if handWrittenColumnList(sql, patterns) == "" {
			t.Errorf("%q is not found", sql)
		}
	}
	for _, sql := range []string{
		"SELECT COALESCE((SELECT value FROM counters WHERE scope = ? AND name = 'message_position'), 0)",
		"DELETE FROM turn_counts WHERE workspace_id = @ws AND session_id = @id",
		" WHERE workspace_id = ? AND turn_id = ?",
		"CREATE TABLE server_keys (\n\tname TEXT NOT NULL PRIMARY KEY,\n\tkey_hex TEXT NOT NULL\n)",
		"SELECT workspace_id, term FROM session_terms_archive", // another table
	} {
		if m := handWrittenColumnList(sql, patterns); m != "" {
			t.Errorf("%q is found (%q)", sql, m)
		}
	}
}
