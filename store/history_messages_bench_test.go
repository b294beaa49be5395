package store

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkTranscriptPage reads a page of 50 messages from the middle of a transcript: of a root
// of 52 turns (104 messages), of a child 50 forks deep, and of a root of 40 turns of 1,000
// messages each, whose page must cost what the short root's does (O(page), not O(transcript)).
// A page of 50 messages of one of those 1,000-message turns (Turn.messagesConnection) too. On
// PostgreSQL as well when FORKGRAPH_TEST_POSTGRES_DSN is set.
//
//	go test ./store -run '^$' -bench BenchmarkTranscriptPage -benchtime 500x
func BenchmarkTranscriptPage(b *testing.B) {
	configs := []struct {
		name string
		cfg  func(testing.TB) Config
	}{{"SQLite", sqliteConfig}}
	if os.Getenv(postgresDSNEnv) != "" {
		configs = append(configs, struct {
			name string
			cfg  func(testing.TB) Config
		}{"PostgreSQL", postgresConfig})
	}
	ctx := context.Background()
	for _, c := range configs {
		db, err := Open(ctx, c.cfg(b))
		require.NoError(b, err)
		chain := buildChain(b, db, 52, 50)
		long := seedLongTranscript(b, db, "long", 40, 1000)
		if db.dialect.lateralJoins {
			// A live server's autovacuum analyzes tables this size; without statistics the planner
			// takes the just-seeded tables for empty ones and scans them.
			require.NoError(b, db.queries.db.Exec("ANALYZE").Error)
		}
		middle := forkengine.MessageCursor{Sequence: 26, Position: 0}
		for _, s := range []struct {
			name, id string
			at       forkengine.MessageCursor
		}{{"Root", chain.root, middle}, {"Depth50", chain.deep, middle}, {"Root40kMessages", long, forkengine.MessageCursor{Sequence: 20, Position: 0}}} {
			b.Run(c.name+"/"+s.name, func(b *testing.B) {
				for b.Loop() {
					page, err := db.SessionMessagesAfter(ctx, "ws", []string{s.id}, s.at, 50)
					if err != nil || len(page[s.id]) != 50 {
						b.Fatalf("page: %v, %d messages", err, len(page[s.id]))
					}
				}
			})
		}
		b.Run(c.name+"/TurnOf1000Messages", func(b *testing.B) {
			for b.Loop() {
				page, err := db.TurnMessagesAfter(ctx, "ws", []string{"long-t20"}, 0, 50)
				if err != nil || len(page["long-t20"]) != 50 {
					b.Fatalf("page: %v, %d messages", err, len(page["long-t20"]))
				}
			}
		})
		require.NoError(b, db.Close())
	}
}

// seedLongTranscript reports a root of turns settled turns of perTurn messages each.
func seedLongTranscript(b testing.TB, db *DB, id string, turns, perTurn int) string {
	ctx := context.Background()
	e := scriptedEngine(b, db, "long")
	_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "ws", ID: id, Provider: "scripted"})
	require.NoError(b, err)
	for i := 1; i <= turns; i++ {
		turn := fmt.Sprintf("%s-t%d", id, i)
		_, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: id, ID: turn,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted})
		require.NoError(b, err)
		in := forkengine.MessageAppend{WorkspaceID: "ws", SessionID: id, TurnID: turn}
		for range perTurn {
			in.Messages = append(in.Messages, forkengine.MessageInput{Role: forkengine.RoleAssistant, Content: "a line of tool output"})
		}
		_, err = e.AppendMessages(ctx, in)
		require.NoError(b, err)
	}
	return id
}
