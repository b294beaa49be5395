package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/benchclock"
)

// BenchmarkAppendMessages is the write side of session search: one transaction per turn that
// appends a prompt (25 words) and an answer (150 words), drawn from a 3,000-word vocabulary,
// to a session whose earlier turns said most of those words already (Steady), or to a new
// session each time (NewSession: every word is new to its document). It uses only the store's
// Tx, so the same file measures a checkout without the index (copy it there) for the A/B in
// docs/BENCHMARKS.md.
//
//	go test ./store -run '^$' -bench AppendMessages -benchtime 2000x -count 5
//
// cpu-µs/op is the process's CPU time per turn (the figure to compare on a shared machine).
//
//	FORKGRAPH_BENCH_POSTGRES_DSN=postgres://... go test ./store -run '^$' -bench AppendMessages ...
func BenchmarkAppendMessages(b *testing.B) {
	ctx := context.Background()
	cfg := sqliteConfig(b)
	if dsn := os.Getenv("FORKGRAPH_BENCH_POSTGRES_DSN"); dsn != "" {
		cfg = Config{DSN: dsn, Logger: quietLog}
	}
	db, err := Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	ws := fmt.Sprintf("append-%d", time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(words int) string {
		out := make([]string, words)
		for i := range out {
			out[i] = fmt.Sprintf("word%d", int(rng.ExpFloat64()*400)%3000)
		}
		return strings.Join(out, " ")
	}
	turn := 0
	appendTurn := func(session string) {
		turn++
		at := time.Unix(int64(turn), 0)
		id := fmt.Sprintf("%s-t%d", session, turn)
		err := db.Update(ctx, func(tx forkengine.Tx) error {
			if err := tx.UpsertTurn(ctx, forkengine.Turn{WorkspaceID: ws, SessionID: session, ID: id, Sequence: int64(turn),
				Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, StartedAt: at, UpdatedAt: at}); err != nil {
				return err
			}
			_, err := tx.InsertMessages(ctx, []forkengine.Message{
				{WorkspaceID: ws, SessionID: session, TurnID: id, ID: id + "-u", Role: forkengine.RoleUser, Content: text(25), CreatedAt: at},
				{WorkspaceID: ws, SessionID: session, TurnID: id, ID: id + "-a", Role: forkengine.RoleAssistant, Content: text(150), CreatedAt: at},
			})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	newSession := func(id string) {
		err := db.Update(ctx, func(tx forkengine.Tx) error {
			return tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: ws, ID: id, Kind: forkengine.SessionRoot, Provider: "sim",
				Title: "a session about " + text(4), Visible: true, CreatedAt: time.Unix(int64(turn), 0), UpdatedAt: time.Unix(int64(turn), 0)})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Steady", func(b *testing.B) {
		newSession("steady")
		for range 200 {
			appendTurn("steady")
		}
		cpu := startCPU(b)
		for b.Loop() {
			appendTurn("steady")
		}
		cpu.report(b)
	})
	b.Run("NewSession", func(b *testing.B) {
		n := 0
		cpu := startCPU(b)
		for b.Loop() {
			n++
			id := fmt.Sprintf("fresh-%d", n)
			b.StopTimer()
			newSession(id)
			b.StartTimer()
			appendTurn(id)
		}
		cpu.report(b) // the untimed session upserts included: the CPU clock cannot stop
	})
}

// cpuClock measures the process's CPU time (user + system, every thread: the SQLite engine runs
// in this process), which a machine shared with other work inflates much less than wall time.
type cpuClock struct{ start time.Duration }

func startCPU(b *testing.B) cpuClock { return cpuClock{benchclock.ProcessCPU(b)} }

// report adds cpu-µs/op to the benchmark's line.
func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64((benchclock.ProcessCPU(b)-c.start).Microseconds())/float64(b.N), "cpu-µs/op")
}
