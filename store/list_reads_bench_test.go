package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/benchclock"
)

// BenchmarkListQueryReads runs, one at a time, the batch reads issue 11's list query makes of a
// page of 100 sessions (bench/listquery's data: three turns of two messages each, 99 of the
// sessions forks of the first): the store's share of that query, without GraphQL.
//
//	go test ./store -run '^$' -bench ListQueryReads -benchmem
func BenchmarkListQueryReads(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, sqliteConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	sessions, turns := seedListQuery(b, db)
	for _, r := range []struct {
		name string
		read func() (int, error)
	}{
		{"Page", func() (int, error) {
			s, err := db.ListSessions(ctx, "ws", forkengine.SessionFilter{}, forkengine.PageCursor{}, 101)
			return len(s), err
		}},
		{"Lineages", func() (int, error) { m, err := db.LineagesByTargetIDs(ctx, "ws", sessions); return len(m), err }},
		{"LineageEnds", func() (int, error) { m, err := db.LineageEndsByTargetIDs(ctx, "ws", sessions); return len(m), err }},
		{"LatestTurns", func() (int, error) { m, err := db.LatestTurnsBySessionIDs(ctx, "ws", sessions); return len(m), err }},
		{"Messages", func() (int, error) { m, err := db.MessagesByTurnIDs(ctx, "ws", turns); return len(m), err }},
		{"MessageTexts", func() (int, error) { m, err := db.MessageTextsByTurnIDs(ctx, "ws", turns, 1001); return len(m), err }},
		// What the deprecated Turn.messages reads with every field selected: the cap and one per turn.
		{"MessagesCapped", func() (int, error) { m, err := db.TurnMessagesAfter(ctx, "ws", turns, 0, 1001); return len(m), err }},
	} {
		b.Run(r.name, func(b *testing.B) {
			// The machine is shared: the process's CPU per read moves less with the others' load
			// than the wall time does.
			cpu0 := benchclock.ProcessCPU(b)
			for b.Loop() {
				n, err := r.read()
				if err != nil || n < 99 {
					b.Fatalf("%d rows, %v", n, err)
				}
			}
			b.ReportMetric(float64(benchclock.ProcessCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}

// seedListQuery stores 100 sessions of three turns of two messages, 99 of them with a lineage
// from s000, and returns the session ids and the ids of their latest turns.
func seedListQuery(b *testing.B, db *DB) (sessions, latest []string) {
	ctx := context.Background()
	err := db.Update(ctx, func(tx forkengine.Tx) error {
		for i := range 100 {
			id := fmt.Sprintf("s%03d", i)
			sessions = append(sessions, id)
			if err := tx.UpsertSession(ctx, forkengine.Session{WorkspaceID: "ws", ID: id, Provider: "simulated", Visible: true, CreatedAt: at(i)}); err != nil {
				return err
			}
			var ts []forkengine.Turn
			var ms []forkengine.Message
			for n := 1; n <= 3; n++ {
				tid := fmt.Sprintf("%s-t%d", id, n)
				ts = append(ts, forkengine.Turn{WorkspaceID: "ws", ID: tid, SessionID: id, Sequence: int64(n), Phase: forkengine.PhaseSettled,
					Outcome: forkengine.OutcomeCompleted, ProviderTurnID: "p-" + tid, StartedAt: at(i), UpdatedAt: at(i)})
				for j, role := range []forkengine.MessageRole{forkengine.RoleUser, forkengine.RoleAssistant} {
					ms = append(ms, forkengine.Message{WorkspaceID: "ws", ID: fmt.Sprintf("%s-m%d", tid, j), SessionID: id, TurnID: tid,
						Role: role, Content: "a message of " + tid, CreatedAt: at(i)})
				}
			}
			latest = append(latest, ts[2].ID)
			if err := tx.InsertTurns(ctx, ts); err != nil {
				return err
			}
			if _, err := tx.InsertMessages(ctx, ms); err != nil {
				return err
			}
			if i > 0 {
				l := forkengine.Lineage{WorkspaceID: "ws", TargetSessionID: id, OperationID: "op-" + id, SourceSessionID: "s000",
					SourceTurnID: "s000-t3", TargetTurnID: id + "-t3", ForkedAt: at(i)}
				if err := tx.InsertLineage(ctx, l); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return sessions, latest
}
