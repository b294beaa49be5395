// Package enginebench measures the fork engine end to end on the real SQLite store: see README.md.
package enginebench

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/store"
)

const (
	workspaceID     = "bench"
	sourceTurns     = 20
	messagesPerTurn = 5
	// inFlight is how many forks the concurrent benchmark keeps going at once, each on its own
	// source (one boundary holds one active fork).
	inFlight = 8
)

// BenchmarkCommittedForks forks 20-turn, 100-message sources through their last turn b.N times,
// each fork driven from StartFork to committed (prepare, dispatch to the simulated driver at zero
// latency, commit of 20 turns, 100 messages and the lineage), and reports committed forks per
// second. Sequential forks one at a time and waits for each commit; Concurrent keeps inFlight
// forks going, as many clients would, so CPU work overlaps while SQLite serialises the writes.
func BenchmarkCommittedForks(b *testing.B) {
	b.Run("Sequential/BarrierOff", func(b *testing.B) { benchmarkSequential(b, false) })
	b.Run("Sequential/BarrierOnWithAcknowledge", func(b *testing.B) { benchmarkSequential(b, true) })
	b.Run(fmt.Sprintf("Concurrent%d/BarrierOff", inFlight), benchmarkConcurrent)
}

// benchmarkSequential runs one fork at a time. With the barrier on, a committed fork blocks its
// boundary until acknowledged, so each iteration also acknowledges, as a client that saw the new
// session would.
func benchmarkSequential(b *testing.B, barrier bool) {
	f := newFixture(b, barrier, 1)
	waiter := newCommitWaiter(b, f.broker)
	defer waiter.close()
	ctx := context.Background()
	i := 0
	f.start(b)
	for b.Loop() {
		op := f.fork(b, 0, i)
		waiter.await(b, op.ID)
		if barrier {
			if _, err := f.engine.Acknowledge(ctx, workspaceID, op.ID, ""); err != nil {
				b.Fatalf("acknowledge fork %d: %v", i, err)
			}
		}
		i++
	}
	f.report(b, i)
}

// benchmarkConcurrent keeps inFlight forks going: each goroutine forks its own source and waits
// for that fork's commit before starting the next.
func benchmarkConcurrent(b *testing.B) {
	f := newFixture(b, false, inFlight)
	waiter := newCommitWaiter(b, f.broker)
	defer waiter.close()
	var workers, forks atomic.Int64
	b.SetParallelism((inFlight + 1) / 2) // × GOMAXPROCS (2 on the target machine) goroutines
	f.start(b)
	b.RunParallel(func(pb *testing.PB) {
		source := int(workers.Add(1)-1) % inFlight
		for pb.Next() {
			op := f.fork(b, source, int(forks.Add(1)))
			waiter.await(b, op.ID)
		}
	})
	f.report(b, int(forks.Load()))
}

// fixture is an engine on a fresh SQLite file with seeded sources.
type fixture struct {
	path       string
	db         *store.DB
	broker     *forkengine.Broker
	engine     *forkengine.Engine
	statements int64
	cpu        time.Duration
	io         processIO
	goroutines uint64
	closeOnce  sync.Once
}

func newFixture(b *testing.B, barrier bool, sources int) *fixture {
	ctx := context.Background()
	f := &fixture{path: filepath.Join(b.TempDir(), "bench.db"), broker: forkengine.NewBroker(1 << 16)}
	var err error
	f.db, err = store.Open(ctx, store.Config{Driver: store.DriverSQLite, DSN: f.path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatalf("open store: %v", err)
	}
	f.engine, err = forkengine.New(forkengine.Config{
		Store: f.db, Publisher: f.broker, DisableBarrier: !barrier,
		Drivers: map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})},
	})
	if err != nil {
		b.Fatalf("build engine: %v", err)
	}
	b.Cleanup(f.close)
	for s := range sources {
		seedSource(b, f.engine, sourceID(s))
	}
	return f
}

// start resets the timer and takes the baselines of the per-fork metrics.
func (f *fixture) start(b *testing.B) {
	f.statements, f.cpu, f.io, f.goroutines = f.db.Statements(), processCPU(), readProcessIO(), goroutinesCreated()
	b.ResetTimer()
}

func (f *fixture) fork(b *testing.B, source, i int) forkengine.ForkOperation {
	op, err := f.engine.StartFork(context.Background(), forkengine.ForkInput{WorkspaceID: workspaceID,
		SourceSessionID: sourceID(source), ThroughTurnID: sourceID(source) + "/" + turnID(sourceTurns), RequestID: fmt.Sprintf("request-%d", i)})
	if err != nil {
		b.Fatalf("fork %d of %s: %v", i, sourceID(source), err)
	}
	return op
}

// report publishes the metrics, then proves the forks are really there: a second handle on the
// file (its own connections) must find forks committed operations, each target with its 20 turns.
func (f *fixture) report(b *testing.B, forks int) {
	// The checkpoint the forks left pending is their work too: pay it inside the measurement.
	if err := f.db.Checkpoint(context.Background()); err != nil {
		b.Fatalf("checkpoint: %v", err)
	}
	elapsed := b.Elapsed()
	statements, cpu, io, goroutines := f.db.Statements()-f.statements, processCPU()-f.cpu, readProcessIO(), goroutinesCreated()-f.goroutines
	b.StopTimer()
	b.ReportMetric(float64(forks)/elapsed.Seconds(), "forks/s")
	b.ReportMetric(float64(statements)/float64(forks), "statements/fork")
	// CPU per fork is steadier than wall time on a shared machine: it counts only this process.
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(forks), "cpu-ms/fork")
	// Each goroutine started is a scheduler hand-off, often a futex wake-up of an idle thread.
	b.ReportMetric(float64(goroutines)/float64(forks), "goroutines/fork")
	if io.ok && f.io.ok {
		// Exact where cpu-ms is noisy: what the forks wrote (WAL frames, the checkpoint's copies),
		// in write system calls and bytes.
		b.ReportMetric(float64(io.writeCalls-f.io.writeCalls)/float64(forks), "write-calls/fork")
		b.ReportMetric(float64(io.written-f.io.written)/1024/float64(forks), "written-KB/fork")
		// Reads of pages SQLite's cache did not hold (a connection that another one's commit
		// made drop its cache reads them again).
		b.ReportMetric(float64(io.readCalls-f.io.readCalls)/float64(forks), "read-calls/fork")
	}
	f.close() // a SQLite file takes one process's store at a time: the check opens its own
	verifyCommitted(b, f.path, forks)
}

// close stops the engine (waiting for its background work) and then closes its store, once.
func (f *fixture) close() {
	f.closeOnce.Do(func() {
		if f.engine != nil {
			_ = f.engine.Close(context.Background())
		}
		_ = f.db.Close()
	})
}

func verifyCommitted(b *testing.B, path string, forks int) {
	ctx := context.Background()
	check, err := store.Open(ctx, store.Config{Driver: store.DriverSQLite, DSN: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatalf("open checking store: %v", err)
	}
	defer check.Close()
	committed, err := check.ListOperations(ctx, workspaceID, forkengine.OperationFilter{
		Statuses: []forkengine.OperationStatus{forkengine.StatusCommitted}}, forkengine.PageCursor{}, 0)
	if err != nil {
		b.Fatalf("count committed forks: %v", err)
	}
	if len(committed) != forks {
		b.Fatalf("%d forks committed in the database, want %d", len(committed), forks)
	}
	targets := make([]string, len(committed))
	for i, op := range committed {
		targets[i] = op.TargetSessionID
	}
	turns, err := check.CountTurnsBySessionIDs(ctx, workspaceID, targets)
	if err != nil {
		b.Fatalf("count copied turns: %v", err)
	}
	for _, target := range targets {
		if turns[target] != sourceTurns {
			b.Fatalf("fork target %s has %d turns, want %d", target, turns[target], sourceTurns)
		}
	}
}

// processIO is this process's write system calls, the bytes they wrote and its read system calls
// (Linux /proc/self/io: syscw, wchar, syscr), ok false where that file cannot be read.
type processIO struct {
	writeCalls, written, readCalls int64
	ok                             bool
}

func readProcessIO() processIO {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return processIO{}
	}
	var p processIO
	for _, line := range strings.Split(string(raw), "\n") {
		name, value, _ := strings.Cut(line, ": ")
		n, err := strconv.ParseInt(value, 10, 64)
		switch {
		case err != nil:
		case name == "syscw":
			p.writeCalls, p.ok = n, true
		case name == "wchar":
			p.written = n
		case name == "syscr":
			p.readCalls = n
		}
	}
	return p
}

// goroutinesCreated is how many goroutines the process has started so far.
func goroutinesCreated() uint64 {
	sample := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// processCPU returns the user and system CPU time this process has used so far.
func processCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		panic(fmt.Sprintf("getrusage: %v", err)) // cannot fail for RUSAGE_SELF
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
