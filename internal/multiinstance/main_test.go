package multiinstance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// binary is the server built once for the whole package by TestMain.
var binary string

func TestMain(m *testing.M) {
	SpinIfAsked() // StartSpinner's child: a CPU spinner, not a test run
	dir, err := os.MkdirTemp("", "multiinstance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "multiinstance:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	// FORKGRAPH_TEST_SERVER_RACE=1 builds the servers with the race detector too (slower).
	binary, err = Build(ctx, filepath.Join("..", ".."), dir, os.Getenv("FORKGRAPH_TEST_SERVER_RACE") == "1")
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "multiinstance:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testLease is the -fork-lease of the PostgreSQL tests: short, so a takeover comes quickly, yet
// renewed every second, so a loaded CI machine does not stall a live instance past its lease.
const testLease = 3 * time.Second

// requirePostgres returns the suite's PostgreSQL URL, skipping the test without one (failing it
// under CI=true, where the script always provides one).
func requirePostgres(t *testing.T) string {
	t.Helper()
	base := os.Getenv(PostgresDSNEnv)
	if base != "" {
		return base
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set under CI=true; scripts/test-postgres.sh starts PostgreSQL and sets it", PostgresDSNEnv)
	}
	t.Skipf("%s is not set; run: eval \"$(bash scripts/start-postgres.sh)\" (multi-instance tests need a real PostgreSQL)", PostgresDSNEnv)
	return ""
}

// cluster is the instances of one test, on one database.
type cluster struct {
	t       *testing.T
	db      string
	adapter *Adapter
	byName  map[string]*Instance
}

// newPostgresCluster gives the test a fresh schema and an adapter; start instances with start.
func newPostgresCluster(t *testing.T) *cluster {
	t.Helper()
	base := requirePostgres(t)
	dsn, drop, err := NewSchema(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, db: dsn, adapter: NewAdapter(), byName: map[string]*Instance{}}
	t.Cleanup(func() {
		for _, in := range c.byName {
			in.Kill()
		}
		c.adapter.Close()
		if err := drop(); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return c
}

// newSQLiteCluster runs on a SQLite file: one instance only, as SQLite allows.
func newSQLiteCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, db: filepath.Join(t.TempDir(), "forkgraph.db"), adapter: NewAdapter(), byName: map[string]*Instance{}}
	t.Cleanup(func() {
		for _, in := range c.byName {
			in.Kill()
		}
		c.adapter.Close()
	})
	return c
}

// start runs instance name on the cluster's database with the adapter as its webhook provider.
// On PostgreSQL it sets the instance id and the short test lease.
func (c *cluster) start(name string) *Instance {
	c.t.Helper()
	return c.startWith(name)
}

// startWith is start with further server flags.
func (c *cluster) startWith(name string, flags ...string) *Instance {
	c.t.Helper()
	in, err := Start(context.Background(), c.options(name, flags...))
	if err != nil {
		c.t.Fatalf("start %s: %v", name, err)
	}
	c.byName[name] = in
	c.t.Cleanup(func() {
		if in.DataRace() {
			c.t.Errorf("server %s reported a data race (log below)", name)
		}
		if c.t.Failed() {
			c.t.Logf("--- log of %s ---\n%s", name, in.Log())
		}
	})
	return in
}

// options are the flags of instance name: the cluster's database, the adapter as its webhook
// provider and, on PostgreSQL, its instance id and the short test lease.
func (c *cluster) options(name string, flags ...string) Options {
	// Held adapter calls last several leases: the webhook timeout must outlast them.
	o := Options{Name: name, Binary: binary, DB: c.db, WebhookURL: c.adapter.URL(name), LogDir: c.t.TempDir(),
		Extra: append([]string{"-webhook-timeout", "60s"}, flags...)}
	if c.postgres() {
		o.InstanceID, o.ForkLease = name, testLease
	}
	return o
}

func (c *cluster) postgres() bool {
	return strings.HasPrefix(c.db, "postgres://") || strings.HasPrefix(c.db, "postgresql://")
}

// client is an HTTP GraphQL client of instance in.
func client(in *Instance) *Client { return NewClient(in.GraphQLURL()) }
