// Command listquery measures issue 11's list query (100 sessions with latestTurn {forkability,
// messages} and forkedFrom {sourceSession}) on forkgraph against a stock gqlgen v0.17.98 server
// that serves the same shape from memory (the gqlgen-shape anchor in ../shared/anchors).
//
//	go run ./bench/listquery                        # anchor vs this checkout
//	go run ./bench/listquery -baseline-rev main     # also main's code, interleaved
//
// It builds the anchor with the anchors' build.sh and forkgraph with go build into temp dirs,
// seeds each forkgraph a fresh SQLite file through the real API (a root session with three settled,
// bound turns of two messages each, forked 99 times through its third turn: every latest turn
// probes the simulated driver and 99 sessions have a forkedFrom), then alternates the servers
// round by round (A/B/A/B): 32 keep-alive connections for -duration (req/s), then one client at a
// time for -serial-duration (p50/p99). Server CPU per request comes from /proc/<pid>/stat
// (utime+stime) around each phase. It prints every round with the machine's load average, the
// medians, and forkgraph/anchor ratios.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	repo, anchors, baselineRev string
	rounds, conns              int
	duration, serialDuration   time.Duration
	warmup                     time.Duration
	profile                    string
	profileSerial              string
	keep                       bool
	gogc                       string
	// env is extra environment of one target by name ("baseline", "forkgraph"): a server
	// setting A/B'd with the same code (-baseline-rev HEAD).
	env map[string][]string
}

func main() {
	var o options
	flag.StringVar(&o.repo, "repo", ".", "forkgraph checkout to build (the module root)")
	flag.StringVar(&o.anchors, "anchors", "", "the anchors directory; empty: ../shared/anchors from -repo")
	flag.StringVar(&o.baselineRev, "baseline-rev", "", "also build this git revision of -repo (git archive) and measure it interleaved")
	flag.IntVar(&o.rounds, "rounds", 5, "A/B rounds (each measures every server once per phase)")
	flag.IntVar(&o.conns, "conns", 32, "concurrent keep-alive connections in the throughput phase")
	flag.DurationVar(&o.duration, "duration", 8*time.Second, "throughput phase length per server and round")
	flag.DurationVar(&o.serialDuration, "serial-duration", 4*time.Second, "one-client phase length per server and round")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load per server before the first round")
	flag.StringVar(&o.profile, "profile", "", "after the rounds, write a 10 s CPU profile of forkgraph under the 32-connection load to this file")
	flag.StringVar(&o.profileSerial, "profile-serial", "", "after the rounds, write a 10 s CPU profile of forkgraph serving one client at a time to this file")
	flag.BoolVar(&o.keep, "keep", false, "keep the temp dir (binaries, databases, server logs)")
	flag.StringVar(&o.gogc, "server-gogc", "", "GOGC for every server, the anchor too (empty: the Go default, 100)")
	o.env = map[string][]string{}
	for _, name := range []string{"baseline", "forkgraph"} {
		flag.Func(name+"-env", "KEY=VALUE added to the "+name+" server's environment (repeatable), e.g. FORKGRAPH_GC_HEAP_FLOOR=16777216",
			func(kv string) error {
				if !strings.Contains(kv, "=") {
					return fmt.Errorf("want KEY=VALUE, got %q", kv)
				}
				o.env[name] = append(o.env[name], kv)
				return nil
			})
	}
	flag.Parse()
	if o.anchors == "" {
		o.anchors = filepath.Join(o.repo, "..", "shared", "anchors")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "listquery-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Printf("temp dir %s kept\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	query, err := os.ReadFile(filepath.Join(o.anchors, "gqlgen-shape", "p1-query.json"))
	if err != nil {
		return fmt.Errorf("read the anchor's query: %w", err)
	}
	targets, err := buildTargets(ctx, o, dir)
	if err != nil {
		return err
	}
	for _, t := range targets {
		t.gogc, t.env = o.gogc, o.env[t.name]
		if len(t.env) > 0 {
			fmt.Printf("%s: environment %s\n", t.name, strings.Join(t.env, " "))
		}
	}
	for _, t := range targets {
		if err := t.start(ctx); err != nil {
			stopAll(targets)
			return err
		}
	}
	defer stopAll(targets)
	for _, t := range targets {
		if err := t.check(ctx, query); err != nil {
			return err
		}
		hammer(ctx, t, query, o.conns, o.warmup)
	}
	fmt.Printf("query %s, %d connections × %s, one client × %s, %d rounds, GOMAXPROCS of the servers: default (%d CPUs), GOGC %s\n\n",
		filepath.Join(o.anchors, "gqlgen-shape", "p1-query.json"), o.conns, o.duration, o.serialDuration, o.rounds, cpus(), orDefault(o.gogc, "default"))
	results := map[string][]phaseResult{}
	for round := 1; round <= o.rounds && ctx.Err() == nil; round++ {
		for _, t := range rotate(targets, round) {
			c := measureConcurrent(ctx, t, query, o.conns, o.duration)
			s := measureSerial(ctx, t, query, o.serialDuration)
			r := phaseResult{concurrent: c, serial: s}
			results[t.name] = append(results[t.name], r)
			fmt.Printf("round %d %-10s %s\n", round, t.name, r)
		}
	}
	report(targets, results)
	if o.profile != "" {
		if err := profileUnderLoad(ctx, targets, query, o.conns, o.profile); err != nil {
			return err
		}
	}
	if o.profileSerial != "" {
		return profileUnderLoad(ctx, targets, query, 1, o.profileSerial)
	}
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// rotate alternates which server goes first, so neither always runs right after the other.
func rotate(ts []*target, round int) []*target {
	out := make([]*target, 0, len(ts))
	for i := range ts {
		out = append(out, ts[(i+round-1)%len(ts)])
	}
	return out
}

func stopAll(ts []*target) {
	for _, t := range ts {
		t.stop()
	}
}
