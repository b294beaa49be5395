package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// Shape of the restart pass: each killed process forks every source once more, through its next
// turn, and its /fork calls are held until it dies, which leaves them dispatching; the next
// process's start-up makes them unknown.
const (
	restartSources = 3
	restartRounds  = 8
)

// killAfter is how long each restarted process lives, all within the 2 s before the first
// reconcile attempts its start-up scheduled fall due (forkengine.FirstReconcileDelay). Those
// after the first add up to more than 2 s, so the forks the first restart's start made unknown
// fall due before the final process starts (whose start-up then makes their attempts); the last
// is short, so the final process starts before those of the last killed one are due.
var killAfter = []time.Duration{450, 150, 400, 200, 450, 300, 450, 100}

// restartLease is every process's -fork-lease, shorter than the default so that the final
// process sweeps every 3 s instead of 5 s, and long enough that waiting out a dead process's
// leases misses the bound: a lease the last killed process took at its start is live until 9 s
// after it, while the bound of the forks it made unknown ends 2 s + 3 s + reconcileSlack (8 s)
// after it.
const restartLease = 9 * time.Second

// restartLimit bounds the wait for every fork to settle once the final process runs.
const restartLimit = 90 * time.Second

// TestRestartsKilledWithinTwoSecondsReconcileOnTime: on one SQLite file, real server processes
// (no -instance-id, so each restart has a new generated one) are started and killed with SIGKILL
// within 2 s, eight times, each leaving forks in dispatching whose next start makes them
// DELIVERY_UNKNOWN. A process killed that soon leaves live leases on the unknown operations it
// had just settled; the next must not wait them out. Once a process is left running, every
// unknown delivery is resolved within the documented bound (docs/api.md: a third of the lease
// after it falls due, or after the start of the process that makes the attempt), the adapter
// found each child, and no fork was sent to the provider twice.
func TestRestartsKilledWithinTwoSecondsReconcileOnTime(t *testing.T) {
	t.Parallel() // its own file and processes; the bounds it holds are measured from each start
	for _, d := range killAfter {
		if life := d * time.Millisecond; life >= forkengine.FirstReconcileDelay {
			t.Fatalf("a process that lives %s outlives its start-up's first reconcile attempts", life)
		}
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := multiinstance.Build(ctx, filepath.Join("..", ".."), dir, os.Getenv("FORKGRAPH_TEST_SERVER_RACE") == "1")
	if err != nil {
		t.Fatal(err)
	}
	adapter := multiinstance.NewAdapter()
	defer adapter.Close()
	adapter.EnableReconcile()
	dbPath := filepath.Join(dir, "forkgraph.db")
	var starts []time.Time
	var running *multiinstance.Instance
	start := func(name string) *multiinstance.Instance {
		t.Helper()
		in, err := multiinstance.Start(ctx, multiinstance.Options{Name: name, Binary: bin, DB: dbPath,
			ForkLease: restartLease, WebhookURL: adapter.URL(name), LogDir: dir, Extra: []string{"-webhook-timeout", "60s"}})
		if err != nil {
			t.Fatal(err)
		}
		starts, running = append(starts, time.Now()), in
		return in
	}
	t.Cleanup(func() {
		if running != nil {
			if t.Failed() {
				t.Logf("--- log of %s ---\n%s", running.Name, running.Log())
			}
			running.Kill()
		}
	})

	first := start("seed")
	for s := range restartSources {
		if err := multiinstance.NewClient(first.GraphQLURL()).ReportSource(ctx, "crash", source(s), "webhook", "", restartRounds); err != nil {
			t.Fatal(err)
		}
	}
	first.Kill()
	var forks []string
	for round := range restartRounds {
		name := fmt.Sprintf("restart-%d", round)
		holds := make([]*multiinstance.Hold, restartSources)
		for s := range holds {
			holds[s] = adapter.HoldFork(name, source(s)) // dies with the process: the fork stays dispatching
		}
		in := start(name)
		kill := time.Now().Add(killAfter[round] * time.Millisecond)
		api := multiinstance.NewClient(in.GraphQLURL())
		for s := range restartSources {
			op, err := api.Fork(ctx, "crash", source(s), fmt.Sprintf("%s-t%d", source(s), round+1), fmt.Sprintf("%s-%d", source(s), round))
			if err != nil {
				t.Fatalf("fork in %s: %v", name, err)
			}
			forks = append(forks, op.ID)
		}
		for s, h := range holds { // each source's fork is held in dispatching before the kill
			select {
			case <-h.Reached():
			case <-ctx.Done():
				t.Fatalf("%s: the fork of %s never reached the adapter", name, source(s))
			}
		}
		time.Sleep(time.Until(kill)) // the kill time is the point of the pass, not a wait for a state
		in.Kill()
		if !in.Killed() {
			t.Fatalf("%s did not end by SIGKILL", name)
		}
	}

	final := start("final")
	api := multiinstance.NewClient(final.GraphQLURL())
	for _, id := range forks {
		op, err := api.AwaitOperation(ctx, "crash", id, restartLimit, func(o multiinstance.Operation) bool {
			return o.Status == "COMMITTED" || o.Status == "FAILED"
		})
		if err != nil {
			t.Fatalf("fork %s after the restarts: %v", id, err)
		}
		if op.Status != "COMMITTED" {
			t.Errorf("fork %s ended %+v, want COMMITTED (the adapter made every child)", id, op)
		}
	}
	resolutions, err := multiinstance.ReadResolutions(ctx, dbPath, "crash")
	if err != nil {
		t.Fatal(err)
	}
	notDue := 0
	for _, r := range resolutions {
		if r.DueAt.After(starts[len(starts)-1]) {
			notDue++
		}
	}
	bound := multiinstance.ReconcileBound{Lease: restartLease, Slack: reconcileSlack, Starts: starts}
	late, worst := bound.Late(resolutions)
	t.Logf("%d forks, %d became unknown (%d not yet due when the final process started); %s; worst against the bound %s",
		len(forks), len(resolutions), notDue, multiinstance.SpreadOf(resolutions), worst.Round(time.Millisecond))
	if notDue == len(resolutions) {
		t.Errorf("none of the %d unknown forks fell due before the final process started; the pass needs some that do", notDue)
	}
	if len(resolutions) < restartRounds {
		t.Errorf("only %d forks became unknown; the pass needs the kills to leave forks dispatching", len(resolutions))
	}
	for _, l := range late {
		t.Errorf("resolved after the bound: %s", l)
	}
	for _, id := range forks {
		if calls := adapter.ForkCallsOf(id); len(calls) != 1 {
			t.Errorf("fork %s: %d /fork calls, want exactly one: %+v", id, len(calls), calls)
		}
	}
}

// reconcileSlack is what the restart pass allows beyond the bound, for the provider's answer and
// the write that records it on a shared two-core machine. Waiting out a dead process's lease, as
// restarts did before, is late by at least restartLease - 2 s - restartLease/3 - reconcileSlack
// (1 s), and by up to a third of the lease more (the sweep that finds the lease expired).
const reconcileSlack = 3 * time.Second

func source(i int) string { return fmt.Sprintf("src-%d", i) }
