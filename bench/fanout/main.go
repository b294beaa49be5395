// Command fanout measures websocket fan-out of the real forkgraph server: it builds and starts
// the server as a subprocess on a loopback port, connects N graphql-transport-ws clients
// subscribed to workspaceEvents, drives turn reports and forks through the API, and reports
// connect time, delivery latency (p50/p99) and server memory per connection (RSS delta / N).
//
//	bash bench/fanout/run.sh            # 10,000 subscribers (raises ulimit -n)
//	go run ./bench/fanout -n 1000       # smaller run
//	go run ./bench/fanout -db "$FORKGRAPH_TEST_POSTGRES_DSN" -instances 2   # spread over two instances on PostgreSQL
//	go run ./bench/fanout -compare before=/tmp/fg-main,after=.,anchor -rounds 2 -events 30 -rate 2
//	                                    # A/B/A/B against stock gqlgen's todo server (see compare.go)
//
// It stops by itself: every phase has a deadline, and the whole run is bounded by -timeout.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

type options struct {
	subscribers int
	turns       int
	forks       int
	rate        float64
	dialers     int
	repo        string
	timeout     time.Duration
	serverGOGC  string
	db          string // a postgres:// URL: the instances share a fresh schema of it
	instances   int
	compare     string // A/B mode: name=repo,...,anchor
	anchors     string
	rounds      int
	events      int
	profile     string // A/B mode: a directory for a CPU profile of each forkgraph run
	memProfile  string // A/B mode: a directory for heap and goroutine profiles once all are live
}

func main() {
	var o options
	flag.IntVar(&o.subscribers, "n", 10000, "websocket subscribers")
	flag.IntVar(&o.turns, "turns", 200, "turn reports to drive")
	flag.IntVar(&o.forks, "forks", 20, "forks to drive (each makes several events)")
	flag.Float64Var(&o.rate, "rate", 20, "mutations per second")
	flag.IntVar(&o.dialers, "dialers", 64, "concurrent connection handshakes")
	flag.StringVar(&o.repo, "repo", ".", "forkgraph module root (built with go build)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "upper bound for the whole run")
	flag.StringVar(&o.serverGOGC, "server-gogc", "", "GOGC for the server (e.g. 10: RSS then tracks live memory, without GC headroom)")
	flag.StringVar(&o.db, "db", "", "a postgres:// URL to run the instances on (a schema of their own); empty: one instance on a fresh SQLite file")
	flag.IntVar(&o.instances, "instances", 1, "server instances (more than one needs -db); subscribers are spread round-robin, the load goes to the first")
	flag.StringVar(&o.compare, "compare", "", "A/B mode: comma-separated name=repo (forkgraph source trees) and anchor (stock gqlgen todo), run in turn -rounds times")
	flag.StringVar(&o.anchors, "anchors", "/work/shared/anchors", "A/B mode: the anchors directory (its build.sh builds gqlgen-todo)")
	flag.IntVar(&o.rounds, "rounds", 2, "A/B mode: rounds (each runs every server once)")
	flag.IntVar(&o.events, "events", 30, "A/B mode: events per run (one mutation each)")
	flag.StringVar(&o.profile, "profile", "", "A/B mode: write a 10 s CPU profile of each forkgraph run's load into this directory")
	flag.StringVar(&o.memProfile, "mem-profile", "", "A/B mode: write each forkgraph run's heap (after a GC) and goroutine profiles, taken once every subscriber is live, into this directory")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	do := run
	if o.compare != "" {
		do = runCompare
	}
	if err := do(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

// raiseFileLimit lifts the soft descriptor limit to the hard one: every subscriber is a socket in
// this process and another in the server, which inherits the limit.
func raiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("get RLIMIT_NOFILE: %w", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("raise RLIMIT_NOFILE: %w", err)
	}
	return lim.Cur, nil
}

func run(ctx context.Context, o options) error {
	limit, err := raiseFileLimit()
	if err != nil {
		return err
	}
	if need := uint64(o.subscribers + 256); limit < need {
		return fmt.Errorf("file descriptor limit %d is below the %d this run needs", limit, need)
	}
	fleetOfServers, cleanup, err := startServers(ctx, o)
	defer cleanup()
	if err != nil {
		return err
	}
	srv := fleetOfServers[0]
	api := &apiClient{base: srv.base}
	ws := fmt.Sprintf("fanout-%d", time.Now().UnixNano())
	if err := api.seedSource(ctx, ws); err != nil {
		return err
	}
	rssBefore, liveBefore, err := fleetOfServers.memory()
	if err != nil {
		return err
	}

	fleet, err := connectFleet(ctx, fleetOfServers.wsURLs(), ws, o.subscribers, o.dialers)
	if err != nil {
		return err
	}
	defer fleet.close()
	if err := fleet.awaitLive(ctx, api, ws); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let the server's allocations settle before reading RSS
	rssAfter, liveAfter, err := fleetOfServers.memory()
	if err != nil {
		return err
	}

	fmt.Fprintf(os.Stderr, "fanout: %d subscribers live; driving load\n", o.subscribers)
	fleet.resetSamples()
	serverCPU0 := fleetOfServers.cpuSeconds()
	selfCPU0, _ := cpuSeconds(os.Getpid())
	driven, err := api.drive(ctx, ws, o)
	if err != nil {
		return err
	}
	delivered := fleet.awaitDelivery(ctx, 60*time.Second)
	serverCPU1 := fleetOfServers.cpuSeconds()
	selfCPU1, _ := cpuSeconds(os.Getpid())
	driven.serverCPU, driven.clientCPU = serverCPU1-serverCPU0, selfCPU1-selfCPU0
	report(o, fleet, driven, delivered, memory{rssBefore, rssAfter, liveBefore, liveAfter})
	return nil
}
