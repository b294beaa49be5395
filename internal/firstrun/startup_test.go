package firstrun

import (
	"net"
	"strings"
	"testing"
)

// Issue 27, item 1: an unknown -db scheme is refused with the forms -db takes, and nothing is
// created (it was read as a SQLite file name, and failed on a lock file in a missing directory).
func TestUnknownDatabaseSchemeNamesTheForms(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"mysql://foo", "sqlite://forkgraph.db", "mysql://root:hunter2@db.internal/app"} {
		dir := t.TempDir()
		r := runIn(t, dir, serverBin, "-db", dsn, "-addr", "127.0.0.1:0")
		if r.code != 1 {
			t.Errorf("-db %s: exit status %d, want 1", dsn, r.code)
		}
		lines := r.lines()
		if len(lines) != 1 {
			t.Fatalf("-db %s printed %d lines, want one:\n%s", dsn, len(lines), r.stderr)
		}
		for _, want := range []string{"-db", "unknown database URL scheme", "SQLite file path", "postgres://"} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("-db %s: %q does not say %q", dsn, lines[0], want)
			}
		}
		if strings.Contains(lines[0], "hunter2") || strings.Contains(lines[0], "lock") {
			t.Errorf("-db %s: %q shows the password or the lock file", dsn, lines[0])
		}
		requireEmptyDir(t, dir)
	}
}

// A listen address that is not host:port, such as a port alone, says the form it takes (-addr
// 8080 was refused as an open-mode address that is not loopback, which it is not either).
func TestListenAddressWithoutAPortNamesTheForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ args []string }{
		{[]string{"-addr", "8080"}},
		{[]string{"-addr", "127.0.0.1:0", "-metrics-addr", "9464"}},
		{[]string{"-addr", "127.0.0.1:0", "-debug-addr", "localhost"}},
	} {
		dir := t.TempDir()
		r := runIn(t, dir, serverBin, tc.args...)
		flag, value := tc.args[len(tc.args)-2], tc.args[len(tc.args)-1]
		example := "127.0.0.1:6060" // -debug-addr's usual address, since localhost has no port to keep
		if value != "localhost" {
			example = "127.0.0.1:" + value
		}
		lines := r.lines()
		if r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], flag+" (") ||
			!strings.Contains(lines[0], "is not host:port") || !strings.Contains(lines[0], example) || strings.Contains(lines[0], "open mode") {
			t.Errorf("%v: exit status %d, printed:\n%s\nwant one line saying %s takes host:port, such as %s", tc.args, r.code, r.stderr, flag, example)
		}
		requireEmptyDir(t, dir)
	}
}

// A SQLite path in a directory that does not exist says so, on one line, and names no lock file
// (it said "open the lock file of missing/fg.db: open missing/fg.db.lock: no such file or
// directory", a file the user never named).
func TestSQLiteFileInAMissingDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runIn(t, dir, serverBin, "-db", "missing/fg.db", "-addr", "127.0.0.1:0")
	if r.code != 1 {
		t.Errorf("exit status %d, want 1", r.code)
	}
	lines := r.lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "directory missing does not exist") || strings.Contains(lines[0], ".lock") {
		t.Errorf("printed:\n%s\nwant one line saying the directory missing does not exist, without the lock file", r.stderr)
	}
	requireEmptyDir(t, dir)
}

// Issue 27, item 4: a flag mistake prints the error and a one-line hint, not the whole usage.
func TestFlagMistakesAreOneLineAndAHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"-sim-latency", "fast"}, `invalid value "fast" for flag -sim-latency: want a duration: a number with a unit, such as 400ms, 2s or 1m`},
		{[]string{"-db-pool", "ten"}, `invalid value "ten" for flag -db-pool: want a whole number`},
		{[]string{"-barrier=maybe"}, `invalid boolean value "maybe" for -barrier: want true or false`},
	} {
		dir := t.TempDir()
		r := runIn(t, dir, serverBin, tc.args...)
		if r.code != 2 {
			t.Errorf("%v: exit status %d, want 2 (a command line refused)", tc.args, r.code)
		}
		lines := r.lines()
		if len(lines) != 2 || lines[0] != "forkgraph: "+tc.want || !strings.Contains(lines[1], "forkgraph -h") {
			t.Errorf("%v printed:\n%s\nwant \"forkgraph: %s\" and a hint to -h", tc.args, r.stderr, tc.want)
		}
		requireEmptyDir(t, dir)
	}
}

// -h lists every flag with a placeholder that says what it takes, and exits 0.
func TestHelpListsTheFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runIn(t, dir, serverBin, "-h")
	if r.code != 0 {
		t.Errorf("-h: exit status %d, want 0", r.code)
	}
	for _, want := range []string{"-webhook-url URL", "-sim-latency duration", "-db-pool int", "-barrier\n", "FORKGRAPH_WEBHOOK_URL"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("-h does not show %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "-webhook-url webhook") {
		t.Error("-h shows -webhook-url's placeholder as \"webhook\"")
	}
	requireEmptyDir(t, dir)
}

// Issue 27, item 2: a port already in use is found before the database is opened: one line, and
// no database or lock file left behind (it was the last of 17 lines, after migrations, the seed
// and recovery).
func TestPortInUseFailsBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	r := runIn(t, dir, serverBin, "-addr", taken.Addr().String(), "-db", "port.db")
	if r.code != 1 {
		t.Errorf("exit status %d, want 1", r.code)
	}
	lines := r.lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "address already in use") || !strings.Contains(lines[0], taken.Addr().String()) {
		t.Errorf("printed:\n%s\nwant one line naming the address in use", r.stderr)
	}
	requireEmptyDir(t, dir)

	// The same for the metrics and profiling listeners.
	for _, flag := range []string{"-metrics-addr", "-debug-addr"} {
		dir := t.TempDir()
		r := runIn(t, dir, serverBin, "-addr", "127.0.0.1:0", flag, taken.Addr().String(), "-db", "port.db")
		if r.code != 1 || len(r.lines()) != 1 || !strings.Contains(r.stderr, "address already in use") {
			t.Errorf("%s taken: exit status %d, printed:\n%s", flag, r.code, r.stderr)
		}
		requireEmptyDir(t, dir)
	}
}

// Issue 27, item 3: an unreachable PostgreSQL is reported once, on one line, naming the address
// and the dial error once, without the password (it was a gorm warning naming a source file,
// then the error, each repeating the dial error twice).
func TestUnreachablePostgresIsOneLine(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := closed.Addr().String()
	_ = closed.Close() // nothing listens there now: the dial is refused
	dir := t.TempDir()
	r := runIn(t, dir, serverBin, "-addr", "127.0.0.1:0", "-db", "postgres://app:s3cret@"+addr+"/forkgraph")
	if r.code != 1 {
		t.Errorf("exit status %d, want 1", r.code)
	}
	lines := r.lines()
	if len(lines) != 1 {
		t.Fatalf("printed %d lines, want one:\n%s", len(lines), r.stderr)
	}
	line := lines[0]
	for _, want := range []string{"cannot connect to the database at " + addr, "connection refused"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q does not say %q", line, want)
		}
	}
	if n := strings.Count(line, "connection refused"); n != 1 {
		t.Errorf("%q gives the dial error %d times", line, n)
	}
	for _, never := range []string{"s3cret", ".go:", "WARN", "failed to initialize database"} {
		if strings.Contains(line, never) {
			t.Errorf("%q shows %q", line, never)
		}
	}
	requireEmptyDir(t, dir)
}
