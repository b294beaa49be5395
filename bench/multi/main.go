// Command multi measures forkgraph with several instances on one PostgreSQL (issue 8):
//
//	-mode forks:        committed forks per second with -instances 1 or 2. Each of -clients HTTP
//	                    clients owns a source session and loops: forkSession, poll the operation
//	                    until COMMITTED, acknowledge it (which frees the boundary), for -duration.
//	                    Clients are spread round-robin over the instances.
//	-mode propagation:  event propagation from instance A to instance B. One writer reports a
//	                    turn on A every -interval (light load); a workspaceEvents subscriber on B
//	                    and one on A timestamp each turn's event on arrival. Latency is arrival
//	                    minus the moment the write was sent, and minus the event's occurredAt.
//	-mode reconcile:    how long after falling due unknown deliveries are resolved, under load:
//	                    -clients busy forkers, -unknown clients whose forks the adapter answers
//	                    unknown (-slow of them with a /reconcile that takes -slow-by), optionally a
//	                    CPU spinner (-spin). -db may also be a SQLite path (one instance). It
//	                    exits non-zero if one is resolved past the documented bound.
//
// It builds the server from -repo, starts the instances on a fresh schema of the PostgreSQL at
// -db (default $FORKGRAPH_TEST_POSTGRES_DSN; scripts/start-postgres.sh prints one) on loopback
// ports, and stops everything when done. See docs/BENCHMARKS.md for figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

func main() {
	multiinstance.SpinIfAsked() // StartSpinner's child (-mode reconcile -spin): a CPU spinner
	mode := flag.String("mode", "forks", "forks, propagation or reconcile")
	repo := flag.String("repo", ".", "the forkgraph module to build")
	db := flag.String("db", os.Getenv(multiinstance.PostgresDSNEnv), "PostgreSQL URL (a schema of its own is created)")
	instances := flag.Int("instances", 2, "forks: how many instances (propagation always uses 2)")
	clients := flag.Int("clients", 8, "forks: concurrent clients")
	duration := flag.Duration("duration", 20*time.Second, "forks: how long to run")
	writes := flag.Int("writes", 500, "propagation: how many turns to report")
	interval := flag.Duration("interval", 50*time.Millisecond, "propagation: pause between writes")
	pool := flag.Int("db-pool", 0, "-db-pool of every instance (0: the server's default)")
	var ro reconcileOptions
	flag.IntVar(&ro.unknown, "unknown", 3, "reconcile: clients whose forks the adapter answers unknown")
	flag.IntVar(&ro.slow, "slow", 1, "reconcile: how many of those have a slow /reconcile")
	flag.DurationVar(&ro.slowBy, "slow-by", 11*time.Second, "reconcile: how long a slow /reconcile takes")
	flag.DurationVar(&ro.every, "every", 400*time.Millisecond, "reconcile: pause between an unknown client's forks")
	flag.DurationVar(&ro.lease, "lease", 15*time.Second, "reconcile: -fork-lease of every instance")
	flag.BoolVar(&ro.spin, "spin", false, "reconcile: run a CPU spinner as wide as the machine beside the instances")
	flag.DurationVar(&ro.settle, "settle", 2*time.Minute, "reconcile: how long to wait for the last unknowns after the load")
	flag.DurationVar(&ro.slack, "slack", 2*time.Second, "reconcile: what a resolution may take past the bound (claiming, describing, recording on a loaded machine)")
	flag.Parse()
	if *mode == "reconcile" {
		ro.repo, ro.db, ro.instances, ro.busy, ro.duration = *repo, *db, *instances, *clients, *duration
		if err := benchReconcile(ro); err != nil {
			fmt.Fprintln(os.Stderr, "multi:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*mode, *repo, *db, *instances, *clients, *duration, *writes, *interval, *pool); err != nil {
		fmt.Fprintln(os.Stderr, "multi:", err)
		os.Exit(1)
	}
}

func run(mode, repo, db string, instances, clients int, duration time.Duration, writes int, interval time.Duration, pool int) error {
	if !strings.HasPrefix(db, "postgres") {
		return fmt.Errorf("-db must be a postgres:// URL (or set %s)", multiinstance.PostgresDSNEnv)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench-multi-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := multiinstance.Build(ctx, repo, dir, false)
	if err != nil {
		return err
	}
	dsn, drop, err := multiinstance.NewSchema(ctx, db)
	if err != nil {
		return err
	}
	defer drop()
	if mode == "propagation" {
		instances = 2
	}
	var ins []*multiinstance.Instance
	defer func() {
		for _, in := range ins {
			in.Stop()
		}
	}()
	for i := range instances {
		o := multiinstance.Options{Binary: bin, DB: dsn, InstanceID: fmt.Sprintf("bench-%c", 'a'+i), LogDir: dir}
		if pool > 0 {
			o.Extra = []string{"-db-pool", fmt.Sprint(pool)}
		}
		in, err := multiinstance.Start(ctx, o)
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}
	fmt.Printf("machine: %d CPUs, load average %s\n", runtime.NumCPU(), loadAverage())
	switch mode {
	case "forks":
		return benchForks(ctx, ins, clients, duration)
	case "propagation":
		return benchPropagation(ctx, ins[0], ins[1], writes, interval)
	}
	return fmt.Errorf("unknown -mode %q", mode)
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	raw, err := os.ReadFile(filepath.Join("/proc", "loadavg"))
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
