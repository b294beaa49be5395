package resolvers_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/internal/benchclock"
	"github.com/forkgraph/forkgraph/store"
)

// deepPageQueries are a client's page of twenty turns with their messages, through the
// deprecated list (Turn.messages, one read of the page's messages) and through the connection
// (Turn.messagesConnection, one paged read of them).
var deepPageQueries = map[string]string{
	"list": `query($w: ID!, $s: ID!, $a: String) { session(workspaceId: $w, id: $s) { turns(first: 20, after: $a) {
		edges { cursor node { id sequence phase settledAt messages { id role content createdAt } } } } } }`,
	"connection": `query($w: ID!, $s: ID!, $a: String) { session(workspaceId: $w, id: $s) { turns(first: 20, after: $a) {
		edges { cursor node { id sequence phase settledAt messagesConnection(first: 10) { edges { node { id role content createdAt } } } } } } } }`,
}

// BenchmarkDeepTurnsPage is issue 24's deep-page aim as a client sees it: the GraphQL answer to
// a page of twenty turns and their messages (in process, as BenchmarkListQuery) of a root and of
// a child fifty forks deep, within 1.2x of the root's time. The chain is the store's
// BenchmarkTurnsPage one, built through the API: a root of 52 turns of two messages, then fifty
// forks, each through its source's last turn, each adding a turn of its own. Depth50 is the page
// after sequence 10 (inside the root's segment), Depth50Tail the page after 80 (twenty segments
// of one turn each). x-root is a deep page's process CPU per op over the root page's of the same
// run, x-root-wall the same of wall time. On SQLite, and on PostgreSQL when
// FORKGRAPH_TEST_POSTGRES_DSN is set:
//
//	go test ./resolvers -run '^$' -bench DeepTurnsPage -benchtime 1000x
func BenchmarkDeepTurnsPage(b *testing.B) {
	drivers := []struct {
		name   string
		config func(testing.TB) store.Config
	}{{store.DriverSQLite, func(t testing.TB) store.Config {
		return store.Config{Driver: store.DriverSQLite, DSN: filepath.Join(t.TempDir(), "deep.db"), Logger: quiet}
	}}}
	if os.Getenv(postgresDSNEnv) != "" {
		drivers = append(drivers, struct {
			name   string
			config func(testing.TB) store.Config
		}{store.DriverPostgres, postgresTestConfig})
	}
	for _, d := range drivers {
		b.Run("driver="+d.name, func(b *testing.B) {
			h := newBenchServerOn(b, d.config(b))
			deep := seedDeepChain(b, h, 52, 50)
			if d.name == store.DriverPostgres {
				// A turns table of a real workspace's size: on the chain's 200 turns (seven pages)
				// the planner scans turns whole once per segment (BenchmarkTurnsPage says more).
				seedTurns(b, h, "wide", 1500)
			}
			pages := []struct{ name, session, after string }{
				{"Root", "root", turnCursorAfter(b, h, "root", 10)},
				{"Depth50", deep, turnCursorAfter(b, h, deep, 10)},
				{"Depth50Tail", deep, turnCursorAfter(b, h, deep, 80)},
			}
			for _, messages := range []string{"list", "connection"} {
				var ratios benchclock.Ratios // of the root page of this run
				for _, p := range pages {
					b.Run("messages="+messages+"/page="+p.name, func(b *testing.B) {
						body := benchBody(b, deepPageQueries[messages], map[string]any{"w": "demo", "s": p.session, "a": p.after})
						const want = 20 * 2 // messages on the page, each turn's two
						ratios.Measure(b, p.name == "Root", func() {
							rec := httptest.NewRecorder()
							req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
							req.Header.Set("Content-Type", "application/json")
							h.ServeHTTP(rec, req)
							if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) ||
								strings.Count(rec.Body.String(), `"role"`) != want {
								b.Fatalf("HTTP %d: %.300s", rec.Code, rec.Body.String())
							}
						})
					})
				}
			}
		})
	}
}

// seedDeepChain reports a root of rootTurns settled turns of two messages each in workspace
// demo, then forks it depth times, each fork through its source's last turn and adding one turn
// of its own, waiting for each to commit; it returns the last fork's id.
func seedDeepChain(b *testing.B, h http.Handler, rootTurns, depth int) string {
	b.Helper()
	report := func(session string, seq int) string {
		turn := fmt.Sprintf("%s-t%d", session, seq)
		vars := map[string]any{"w": "demo", "s": session, "t": turn, "p": "sim-" + turn, "b": map[string]int{"turn": seq}}
		benchDo(b, h, `mutation($w: ID!, $s: ID!, $t: ID!, $p: String!, $b: JSON!) { reportTurn(input: {workspaceId: $w, sessionId: $s,
			id: $t, phase: SETTLED, outcome: COMPLETED, providerTurnId: $p, providerTurnBinding: $b}) { id } }`, vars, nil)
		delete(vars, "p")
		delete(vars, "b")
		benchDo(b, h, `mutation($w: ID!, $s: ID!, $t: ID!) { appendMessages(input: {workspaceId: $w, sessionId: $s, turnId: $t,
			messages: [{role: USER, content: "prompt"}, {role: ASSISTANT, content: "answer"}]}) { id } }`, vars, nil)
		return turn
	}
	benchDo(b, h, `mutation { reportSession(input: {workspaceId: "demo", id: "root", provider: "simulated",
		providerSessionId: "sim-root", title: "Root"}) { id } }`, nil, nil)
	var through string
	for seq := 1; seq <= rootTurns; seq++ {
		through = report("root", seq)
	}
	source := "root"
	for i := 1; i <= depth; i++ {
		target := fmt.Sprintf("c%d", i)
		var started struct{ ForkSession struct{ ID string } }
		benchDo(b, h, `mutation($w: ID!, $src: ID!, $t: ID!, $r: ID!, $s: ID!) { forkSession(input: {workspaceId: $w,
			sourceSessionId: $src, throughTurnId: $t, requestId: $r, targetSessionId: $s}) { id } }`,
			map[string]any{"w": "demo", "src": source, "t": through, "r": "fork-" + target, "s": target}, &started)
		benchAwaitCommitted(b, h, started.ForkSession.ID)
		through, source = report(target, rootTurns+i), target
	}
	return source
}

// seedTurns reports a session of n settled turns without messages.
func seedTurns(b *testing.B, h http.Handler, session string, n int) {
	b.Helper()
	benchDo(b, h, `mutation($s: ID!) { reportSession(input: {workspaceId: "demo", id: $s, provider: "simulated"}) { id } }`,
		map[string]any{"s": session}, nil)
	for seq := 1; seq <= n; seq++ {
		benchDo(b, h, `mutation($s: ID!, $t: ID!) { reportTurn(input: {workspaceId: "demo", sessionId: $s, id: $t,
			phase: SETTLED, outcome: COMPLETED}) { id } }`, map[string]any{"s": session, "t": fmt.Sprintf("%s-t%d", session, seq)}, nil)
	}
}

// turnCursorAfter is the cursor of session's turn at sequence seq (its seq-th turn).
func turnCursorAfter(b *testing.B, h http.Handler, session string, seq int) string {
	b.Helper()
	var got struct {
		Session struct {
			Turns struct {
				PageInfo struct{ EndCursor string }
			}
		}
	}
	benchDo(b, h, `query($s: ID!, $n: Int) { session(workspaceId: "demo", id: $s) { turns(first: $n) { pageInfo { endCursor } } } }`,
		map[string]any{"s": session, "n": seq}, &got)
	if got.Session.Turns.PageInfo.EndCursor == "" {
		b.Fatalf("no cursor after turn %d of %s", seq, session)
	}
	return got.Session.Turns.PageInfo.EndCursor
}
