package store

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/benchclock"
)

// chainFixture is a root of rootTurns settled turns (two messages each) and a chain of depth
// forks of it, each through the previous one's last turn and adding one turn of its own, built
// through the engine as clients would.
type chainFixture struct {
	root, deep string
	deepTurns  int
}

func buildChain(t testing.TB, db *DB, rootTurns, depth int) chainFixture {
	t.Helper()
	ctx := context.Background()
	e := scriptedEngine(t, db, "chain")
	report := func(session string, from, to int) string {
		last := ""
		for i := from; i <= to; i++ {
			last = fmt.Sprintf("%s-t%d", session, i)
			ptid := "p-" + last
			_, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: session, ID: last,
				Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: &ptid,
				ProviderTurnBinding: []byte(`{"t":1}`)})
			require.NoError(t, err)
			_, err = e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "ws", SessionID: session, TurnID: last,
				Messages: []forkengine.MessageInput{{Role: forkengine.RoleUser, Content: "prompt"}, {Role: forkengine.RoleAssistant, Content: "answer"}}})
			require.NoError(t, err)
		}
		return last
	}
	psid := "p-root"
	_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "ws", ID: "root", Provider: "scripted", ProviderSessionID: &psid})
	require.NoError(t, err)
	through, source := report("root", 1, rootTurns), "root"
	for i := 1; i <= depth; i++ {
		target := fmt.Sprintf("c%d", i)
		op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: source, ThroughTurnID: through,
			RequestID: "r-" + target, TargetSessionID: target})
		require.NoError(t, err)
		op, err = e.ProcessOperation(ctx, "ws", op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		through, source = report(target, rootTurns+i, rootTurns+i), target
	}
	return chainFixture{root: "root", deep: source, deepTurns: rootTurns + depth}
}

// A child fifty forks deep answers a page of turns, the messages of the page and the counts of
// its transcript and turns with the same number of statements as a root session does, one each
// whatever the depth, and with as many rows: the page's (a deep page's turns read has one more,
// the child's own latest turn, which its own part finds after the cursor).
func TestDeepChainPagesTakeTheStatementsOfARoot(t *testing.T) {
	t.Parallel()
	t.Run(DriverSQLite, func(t *testing.T) { testDeepChainCosts(t, migratedSQLite(t)) })
	t.Run(DriverPostgres, func(t *testing.T) {
		requirePostgres(t)
		testDeepChainCosts(t, postgresConfig(t))
	})
}

func testDeepChainCosts(t *testing.T, cfg Config) {
	db := openTest(t, cfg)
	ctx := context.Background()
	c := buildChain(t, db, 52, 50)
	type cost struct{ statements, rows int64 }
	measure := func(read func()) cost {
		s, r := db.Statements(), db.RowsRead()
		read()
		return cost{db.Statements() - s, db.RowsRead() - r}
	}
	costs := func(session string) (turns, messages, counts cost, page []forkengine.Turn) {
		turns = measure(func() {
			got, err := db.TurnsBySessionIDs(ctx, "ws", []string{session}, 10, 20)
			require.NoError(t, err)
			page = got[session]
		})
		ids := make([]string, len(page))
		for i, turn := range page {
			ids[i] = turn.ID
		}
		messages = measure(func() {
			msgs, err := db.MessagesByTurnIDs(ctx, "ws", ids)
			require.NoError(t, err)
			require.Len(t, msgs, len(ids), "every turn of the page has its messages")
		})
		counts = measure(func() {
			n, err := db.CountSessionMessages(ctx, "ws", []string{session})
			require.NoError(t, err)
			require.NotZero(t, n[session]) // the values are checked below
		})
		return turns, messages, counts, page
	}
	rootTurns, rootMessages, rootCount, rootPage := costs(c.root)
	deepTurns, deepMessages, deepCount, deepPage := costs(c.deep)
	require.Len(t, rootPage, 20)
	require.Len(t, deepPage, 20)
	require.Equal(t, cost{1, 20}, rootTurns)
	require.Equal(t, rootTurns.statements, deepTurns.statements, "a page of turns")
	require.LessOrEqual(t, deepTurns.rows, rootTurns.rows+1, "the rows of a page of turns")
	require.Equal(t, cost{1, 40}, rootMessages)
	require.Equal(t, rootMessages, deepMessages, "the messages of a page")
	require.Equal(t, cost{1, 1}, rootCount)
	require.Equal(t, rootCount, deepCount, "a transcript's count")
	transcripts, err := db.CountSessionMessages(ctx, "ws", []string{c.root, c.deep})
	require.NoError(t, err)
	require.Equal(t, map[string]int{c.root: 104, c.deep: 204}, transcripts)
	counts, err := db.CountTurnsBySessionIDs(ctx, "ws", []string{c.root, c.deep})
	require.NoError(t, err)
	require.Equal(t, map[string]int{c.root: 52, c.deep: 102}, counts)
}

// BenchmarkTurnsPage reads a page of 20 turns and their messages (each turn's whole list, and a
// page of each as the API reads them), of a root and of a child 50 forks deep (aim: within 1.2x
// of the root's time), on SQLite and, when
// FORKGRAPH_TEST_POSTGRES_DSN is set, PostgreSQL. The child's history is the root's 52 turns
// then one turn of each of 49 forks: Depth50 reads the page after sequence 10, within the root's
// segment, Depth50Tail the page after 80, across twenty segments of one turn each (the worst a
// page can overlap). cpu-us/op is the process's CPU time (Getrusage), steadier than wall time on
// a shared machine. x-root is a deep page's CPU per op over the root's of the same run (the
// aim's ratio, from one process); x-root-wall the same of wall time, which on PostgreSQL holds
// the server's work (its planning and execution), not in the client's CPU. Interleave rounds and compare with benchstat:
//
//	go test -c -o /tmp/store.test ./store && cd store && for i in $(seq 10); do
//	  /tmp/store.test -test.run '^$' -test.bench 'BenchmarkTurnsPage$' -test.benchtime 2000x; done > /tmp/pages.txt
//	benchstat -col /page /tmp/pages.txt
func BenchmarkTurnsPage(b *testing.B) {
	drivers := []struct {
		name   string
		config func(testing.TB) Config
	}{{DriverSQLite, sqliteConfig}}
	if os.Getenv(postgresDSNEnv) != "" {
		drivers = append(drivers, struct {
			name   string
			config func(testing.TB) Config
		}{DriverPostgres, postgresConfig})
	}
	for _, d := range drivers {
		b.Run("driver="+d.name, func(b *testing.B) {
			db, err := Open(context.Background(), d.config(b))
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, db.Close()) })
			c := buildChain(b, db, 52, 50)
			if db.dialect.lateralJoins {
				// PostgreSQL: tables of a real workspace's size, analysed as autovacuum would. On the
				// chain's few hundred rows its planner rightly scans the turns and messages per
				// segment, and autovacuum's analyse, arriving in the middle of a run, changed the
				// plans under it. (SQLite keeps no statistics: its plans do not depend on the size.)
				// The long transcript makes messages a real table's size and the wide one turns: with
				// the chain's 200 turns alone (seven pages) the planner scanned turns whole once per
				// segment, which cost the tail page 1.7x a root's wall time (20 scans of 5 µs each).
				seedLongTranscript(b, db, "long", 40, 1000)
				seedLongTranscript(b, db, "wide", 1500, 1)
				require.NoError(b, db.queries.db.Exec("ANALYZE").Error)
			}
			ctx := context.Background()
			// A page's messages as the engine reads a list of them (MessagesByTurnIDs) and as
			// the API reads them, Turn.messages and Turn.messagesConnection alike: a page per
			// turn (TurnMessagesAfter; a connection's first ten and one more).
			reads := []struct {
				name string
				read func(ids []string) (map[string][]forkengine.Message, error)
			}{
				{"byTurn", func(ids []string) (map[string][]forkengine.Message, error) {
					return db.MessagesByTurnIDs(ctx, "ws", ids)
				}},
				{"paged", func(ids []string) (map[string][]forkengine.Message, error) {
					return db.TurnMessagesAfter(ctx, "ws", ids, 0, 11)
				}},
			}
			for _, messages := range reads {
				var ratios benchclock.Ratios // of the root page of this run
				for _, s := range []struct {
					name, id string
					after    int64
				}{{"Root", c.root, 10}, {"Depth50", c.deep, 10}, {"Depth50Tail", c.deep, 80}} {
					b.Run("messages="+messages.name+"/page="+s.name, func(b *testing.B) {
						ratios.Measure(b, s.name == "Root", func() {
							page, err := db.TurnsBySessionIDs(ctx, "ws", []string{s.id}, s.after, 20)
							if err != nil || len(page[s.id]) != 20 {
								b.Fatalf("page: %v, %d turns", err, len(page[s.id]))
							}
							ids := make([]string, 0, 20)
							for _, t := range page[s.id] {
								ids = append(ids, t.ID)
							}
							msgs, err := messages.read(ids)
							if err != nil || len(msgs) != 20 {
								b.Fatalf("messages: %v, of %d turns", err, len(msgs))
							}
						})
					})
				}
			}
		})
	}
}
