// Command forks measures committed forks end to end over HTTP on one SQLite file (issue 11):
// it builds forkgraph from -repo (or runs -bin), starts it on a fresh database file with the
// simulated driver at zero latency, reports -clients sources of -turns settled turns with
// -messages messages each, and then each client loops for -duration: forkSession through its
// source's last turn, wait for COMMITTED (-wait poll: read forkOperation every 2 ms; -wait events:
// from a workspaceEvents subscription of its own), acknowledgeForkOperation (which frees the
// boundary under the default barrier).
//
// It reports committed forks per second, SQL statements per fork (from the server's
// forkgraph_store_statements_total), and database bytes per fork: the server is stopped
// gracefully before and after the measured loop, so SQLite checkpoints its WAL into the file,
// and page_count × page_size is read from the file then. Built with -tags sqlite_dbstat, it also
// splits the bytes per table and index (SQLite's dbstat). See docs/BENCHMARKS.md for figures.
//
// With -sizes it measures the transcript-size axis instead (sizes.go): fork latency, bytes and
// RSS per fork, and a cost pass of CPU time and statements per fork (cpu.go), on SQLite or
// -postgres, each size's seeded database kept in -data for later runs.
//
//	go run -tags sqlite_dbstat ./bench/forks -duration 20s
//	go run ./bench/forks -bin /tmp/fg -sizes 1MB,10MB,100MB,1GB -size-forks 30 -cost-forks 10 -data /tmp/forks-data
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
)

func main() {
	var o options
	flag.StringVar(&o.repo, "repo", ".", "the forkgraph module to build")
	flag.StringVar(&o.bin, "bin", "", "a forkgraph binary to run instead of building -repo")
	flag.IntVar(&o.clients, "clients", 4, "concurrent clients, each forking its own source")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "how long the measured loop runs")
	flag.IntVar(&o.turns, "turns", 20, "settled turns per source")
	flag.IntVar(&o.messages, "messages", 5, "messages per turn")
	flag.IntVar(&o.warmup, "warmup", 5, "forks per client before the measured loop")
	flag.BoolVar(&o.keep, "keep", false, "keep the database file and server logs (printed)")
	flag.StringVar(&o.wait, "wait", "poll", "how a client learns its fork committed: poll (forkOperation every 2 ms) or events (its workspaceEvents subscription)")
	flag.StringVar(&o.sizes, "sizes", "", "the transcript-size axis instead of the loop: content sizes to fork, e.g. 1MB,10MB,100MB,1GB (sizes.go)")
	flag.IntVar(&o.sizeForks, "size-forks", 5, "with -sizes: measured forks per size")
	flag.StringVar(&o.postgres, "postgres", "", "with -sizes: a PostgreSQL URL to measure on (a schema per size) instead of SQLite")
	flag.StringVar(&o.data, "data", "", "with -sizes: keep each size's seeded database in this directory (SQLite) or in a schema forks_sizes_<size> (PostgreSQL) and reuse it in later runs")
	flag.IntVar(&o.costForks, "cost-forks", 5, "with -sizes: forks of the cost pass per size (server and database CPU, statements per fork)")
	flag.StringVar(&o.debugAddr, "debug-addr", "", "with -sizes: the server's -debug-addr (net/http/pprof), to profile it while the forks run")
	flag.Parse()
	runner := run
	if o.sizes != "" {
		runner = runSizes
	}
	if err := runner(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "forks:", err)
		os.Exit(1)
	}
}

type options struct {
	repo, bin, wait, sizes, postgres, data, debugAddr      string
	clients, turns, messages, warmup, sizeForks, costForks int
	duration                                               time.Duration
	keep                                                   bool
}

func run(ctx context.Context, o options) error {
	if o.wait != "poll" && o.wait != "events" {
		return fmt.Errorf("-wait must be poll or events, got %q", o.wait)
	}
	dir, err := os.MkdirTemp("", "bench-forks-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Printf("files kept in %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	bin, err := binary(ctx, o, dir)
	if err != nil {
		return err
	}
	dbPath := filepath.Join(dir, "forkgraph.db")
	fmt.Printf("machine: %d CPUs, load average %s\n", runtime.NumCPU(), loadAverage())

	// Phase 1: seed and warm up, then stop so the WAL is checkpointed into the file.
	srv, err := startServer(ctx, bin, dbPath, dir, "seed")
	if err != nil {
		return err
	}
	w, err := newWorkload(ctx, srv, o)
	if err != nil {
		srv.Stop()
		return err
	}
	defer w.close()
	if err := w.seed(ctx); err != nil {
		srv.Stop()
		return err
	}
	if _, err := w.loop(ctx, "warmup", o.warmup, 0); err != nil {
		srv.Stop()
		return err
	}
	srv.Stop()
	before, err := measureFile(dbPath)
	if err != nil {
		return err
	}

	// Phase 2: the measured loop on the same file.
	srv, err = startServer(ctx, bin, dbPath, dir, "measure")
	if err != nil {
		return err
	}
	if err := w.retarget(ctx, srv); err != nil {
		srv.Stop()
		return err
	}
	stmts0, err := scrapeStatements(ctx, srv.URL())
	if err != nil {
		srv.Stop()
		return err
	}
	res, err := w.loop(ctx, "measure", 0, o.duration)
	if err != nil {
		srv.Stop()
		return err
	}
	stmts1, serr := scrapeStatements(ctx, srv.URL())
	load := loadAverage()
	srv.Stop()
	after, err := measureFile(dbPath)
	if err != nil {
		return err
	}
	report(o, res, before, after, stmts0, stmts1, serr, load)
	return nil
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func numCPU() int { return runtime.NumCPU() }
