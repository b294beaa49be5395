// Package enginebench measures the fork engine end to end on the real SQLite store: see README.md.
package enginebench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/store"
)

const (
	workspaceID     = "bench"
	sourceID        = "source"
	sourceTurns     = 20
	messagesPerTurn = 5
)

// BenchmarkCommittedForks forks a 20-turn, 100-message source through its last turn b.N times,
// each fork driven from StartFork to committed (prepare, dispatch to the simulated driver at zero
// latency, commit of 20 turns and 100 messages and the lineage), and reports committed forks per
// second. Forks run one after another: SQLite has one writer, so the figure is the engine's
// sequential write path, the same for one client or many.
func BenchmarkCommittedForks(b *testing.B) {
	for _, barrier := range []bool{false, true} {
		name := "BarrierOff"
		if barrier {
			name = "BarrierOnWithAcknowledge"
		}
		b.Run(name, func(b *testing.B) { benchmarkForks(b, barrier) })
	}
}

// benchmarkForks runs the loop. With the barrier on, a committed fork blocks its boundary until
// acknowledged, so each iteration also acknowledges, as a client that saw the new session would.
func benchmarkForks(b *testing.B, barrier bool) {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Driver: store.DriverSQLite,
		DSN: filepath.Join(b.TempDir(), "bench.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatalf("open store: %v", err)
	}
	defer db.Close()
	broker := forkengine.NewBroker(1 << 14)
	engine, err := forkengine.New(forkengine.Config{
		Store: db, Publisher: broker, DisableBarrier: !barrier,
		Drivers: map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})},
	})
	if err != nil {
		b.Fatalf("build engine: %v", err)
	}
	defer engine.Close(ctx)
	seedSource(b, engine)
	sub := broker.Subscribe(workspaceID)
	defer sub.Close()

	i, statements, cpu := 0, db.Statements(), processCPU(b)
	for b.Loop() {
		op, err := engine.StartFork(ctx, forkengine.ForkInput{WorkspaceID: workspaceID, SourceSessionID: sourceID,
			ThroughTurnID: turnID(sourceTurns), RequestID: fmt.Sprintf("request-%d", i)})
		if err != nil {
			b.Fatalf("fork %d: %v", i, err)
		}
		awaitCommitted(b, sub, op.ID)
		if barrier {
			if _, err := engine.Acknowledge(ctx, workspaceID, op.ID); err != nil {
				b.Fatalf("acknowledge fork %d: %v", i, err)
			}
		}
		i++
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "forks/s")
	b.ReportMetric(float64(db.Statements()-statements)/float64(i), "statements/fork")
	// CPU per fork is steadier than wall time on a shared machine: it counts only this process.
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(time.Millisecond)/float64(i), "cpu-ms/fork")
}

// awaitCommitted reads the workspace's events until the operation reaches a terminal status; any
// outcome other than committed fails the benchmark.
func awaitCommitted(b *testing.B, sub *forkengine.Subscription, operationID string) {
	for ev := range sub.C() {
		if ev.OperationID != operationID || !ev.Status.Terminal() {
			continue
		}
		if ev.Status != forkengine.StatusCommitted {
			b.Fatalf("fork %s ended %s", operationID, ev.Status)
		}
		return
	}
	b.Fatalf("event stream ended before fork %s finished: %v", operationID, sub.Err())
}

// processCPU returns the user and system CPU time this process has used so far.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func turnID(n int) string { return fmt.Sprintf("turn-%02d", n) }

// seedSource reports the source with settled, provider-bound turns and their messages.
func seedSource(b *testing.B, e *forkengine.Engine) {
	ctx := context.Background()
	ptr := func(s string) *string { return &s }
	if _, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: workspaceID, ID: sourceID,
		Provider: "simulated", ProviderSessionID: ptr("provider-source"), Title: ptr("Benchmark source")}); err != nil {
		b.Fatalf("seed session: %v", err)
	}
	for t := 1; t <= sourceTurns; t++ {
		id := turnID(t)
		if _, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: workspaceID, SessionID: sourceID, ID: id,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptr("provider-" + id),
			ProviderTurnBinding: json.RawMessage(`{"checkpoint":"` + id + `"}`)}); err != nil {
			b.Fatalf("seed %s: %v", id, err)
		}
		msgs := make([]forkengine.MessageInput, messagesPerTurn)
		for m := range msgs {
			msgs[m] = forkengine.MessageInput{Role: forkengine.RoleAssistant,
				Content: fmt.Sprintf("%s: message %d with a few words of content to copy", id, m)}
		}
		if _, err := e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: workspaceID, SessionID: sourceID,
			TurnID: id, Messages: msgs}); err != nil {
			b.Fatalf("seed messages of %s: %v", id, err)
		}
	}
}
