package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// postgresDSNEnv names the server of the PostgreSQL tests; scripts/start-postgres.sh prints it.
const postgresDSNEnv = "FORKGRAPH_TEST_POSTGRES_DSN"

// TestCrashTakeoverOnPostgres is the crash test with two instances on one PostgreSQL database:
// instance A is SIGKILLed with one fork in each in-flight phase. Instance B, starting while A's
// leases are live, leaves them alone and calls no provider; once they expire (B's clock runs past
// them) it takes every one over by the start-up rules, and the provider was called at most once
// per operation, counted on disk.
func TestCrashTakeoverOnPostgres(t *testing.T) {
	t.Parallel() // its own schema and processes
	dsn := postgresSchema(t)
	dir := t.TempDir()
	bin := buildHarness(t, dir)
	callsPath := filepath.Join(dir, "calls.log")

	m := parkAndKill(t, bin, dsn, callsPath, "-instance-id", "instance-a", "-lease", "30s")
	assertParkedAfterKill(t, dsn, m)
	assertChildIDs(t, dsn, m)
	before := readSource(t, dsn)
	parked := map[string]string{m.Child: "park", m.Dispatching: "park", m.ProviderAccepted: "park"}

	early := runRecover(t, bin, dsn, callsPath, "-instance-id", "instance-b")
	if early.Scanned != 0 || len(early.Errors) != 0 {
		t.Fatalf("while A's leases are live B took over %+v, want nothing", early)
	}
	assertParkedAfterKill(t, dsn, m)
	assertCalls(t, callsPath, parked)

	report := runRecover(t, bin, dsn, callsPath, "-instance-id", "instance-b", "-clock-offset", "1m")
	if len(report.Errors) != 0 || report.Scanned != 3 || report.Unknown != 1 || report.Committed != 2 {
		t.Fatalf("takeover report %+v, want 3 scanned, 1 unknown, 2 committed, no errors", report)
	}
	assertRecovered(t, dsn, m, before)
	assertChildIDs(t, dsn, m)
	assertCalls(t, callsPath, map[string]string{m.Child: "park", m.Prepared: "recover", m.Dispatching: "park", m.ProviderAccepted: "park"})
}

// postgresSchema returns a URL of the test server whose connections use a schema of their own,
// dropped afterwards. Without a server it skips, as the store's PostgreSQL tests do: the plain
// `go test ./...` of make test has none, and scripts/test-postgres.sh, which make test and CI run
// next, starts one and runs this package again with it (and fails under CI when it cannot).
func postgresSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv(postgresDSNEnv)
	if base == "" {
		t.Skipf("%s is not set; run: eval \"$(scripts/start-postgres.sh)\"", postgresDSNEnv)
	}
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	schema := "forkgraph_crash_" + hex.EncodeToString(suffix)
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		if sqlDB, err := admin.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
