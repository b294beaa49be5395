package resolvers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/benchclock"
)

// listQuery is issue 11's list query (the gqlgen-shape anchor's p1-query.json).
const listQuery = `query($w: ID!) { sessions(workspaceId: $w, first: 100) { totalCount edges { cursor node { id title
	latestTurn { id phase providerForkBindingAvailable messages { role content } }
	forkedFrom { sourceSessionId sourceSession { title } } } } } }`

// BenchmarkListQuery runs the list query in process (no network, no edge middleware) over SQLite:
// 100 sessions, each latest turn settled and bound (so forkability probes the simulated driver)
// with two messages, 99 of them forks. It is the GraphQL share of bench/listquery's figures, for
// profiling and allocation counts:
//
//	go test ./resolvers -run '^$' -bench ListQuery -benchmem -cpuprofile /tmp/cpu.out
func BenchmarkListQuery(b *testing.B) {
	h := newBenchServer(b)
	seedListQuery(b, h)
	body := benchBody(b, listQuery, map[string]any{"w": "demo"})
	// The machine is shared: wall time per query moves with everyone else's load, the process's
	// CPU time per query much less, so it is reported beside ns/op.
	cpu0 := benchclock.ProcessCPU(b)
	for b.Loop() {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
			b.Fatalf("HTTP %d: %.300s", rec.Code, rec.Body.String())
		}
	}
	b.ReportMetric(float64(benchclock.ProcessCPU(b)-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
}

func benchBody(b *testing.B, query string, vars map[string]any) string {
	raw, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		b.Fatal(err)
	}
	return string(raw)
}

// benchDo runs one operation through h and decodes its data into out (when not nil).
func benchDo(b *testing.B, h http.Handler, query string, vars map[string]any, out any) {
	b.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(benchBody(b, query, vars)))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	var resp struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) > 0 {
		b.Fatalf("%s: HTTP %d %s", query, rec.Code, rec.Body.String())
	}
	if out != nil {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			b.Fatal(err)
		}
	}
}

// seedListQuery builds bench/listquery's dataset: s0 with three settled, bound turns of two
// messages each, forked 99 times through its third turn.
func seedListQuery(b *testing.B, h http.Handler) {
	w := map[string]any{"w": "demo"}
	benchDo(b, h, `mutation($w: ID!) { reportSession(input: {workspaceId: $w, id: "s0", provider: "simulated",
		providerSessionId: "sim-s0", title: "Session 0"}) { id } }`, w, nil)
	for i := 1; i <= 3; i++ {
		turn := fmt.Sprintf("s0-t%d", i)
		vars := map[string]any{"w": "demo", "t": turn, "p": "sim-" + turn, "b": map[string]int{"turn": i}}
		benchDo(b, h, `mutation($w: ID!, $t: ID!, $p: String!, $b: JSON!) { reportTurn(input: {workspaceId: $w, sessionId: "s0",
			id: $t, phase: SETTLED, outcome: COMPLETED, providerTurnId: $p, providerTurnBinding: $b}) { id } }`, vars, nil)
		delete(vars, "p")
		delete(vars, "b")
		benchDo(b, h, `mutation($w: ID!, $t: ID!) { appendMessages(input: {workspaceId: $w, sessionId: "s0", turnId: $t,
			messages: [{role: USER, content: "question"}, {role: ASSISTANT, content: "answer"}]}) { id } }`, vars, nil)
	}
	for i := 1; i <= 99; i++ {
		var started struct{ ForkSession struct{ ID string } }
		benchDo(b, h, `mutation($w: ID!, $r: ID!, $s: ID!) { forkSession(input: {workspaceId: $w, sourceSessionId: "s0",
			throughTurnId: "s0-t3", requestId: $r, targetSessionId: $s}) { id } }`,
			map[string]any{"w": "demo", "r": fmt.Sprint("fork-", i), "s": fmt.Sprint("s", i)}, &started)
		op := benchAwaitCommitted(b, h, started.ForkSession.ID)
		benchDo(b, h, `mutation($w: ID!, $id: ID!) { acknowledgeForkOperation(workspaceId: $w, id: $id) { id } }`, op, nil)
	}
}

// benchAwaitCommitted polls fork operation id of workspace demo until it is COMMITTED (30 s at
// most) and returns the variables that name it.
func benchAwaitCommitted(b *testing.B, h http.Handler, id string) map[string]any {
	b.Helper()
	op := map[string]any{"w": "demo", "id": id}
	for deadline := time.Now().Add(30 * time.Second); ; {
		var got struct{ ForkOperation struct{ Status string } }
		benchDo(b, h, `query($w: ID!, $id: ID!) { forkOperation(workspaceId: $w, id: $id) { status } }`, op, &got)
		if got.ForkOperation.Status == "COMMITTED" {
			return op
		}
		if time.Now().After(deadline) {
			b.Fatalf("fork %s is %s after 30s", id, got.ForkOperation.Status)
		}
		time.Sleep(2 * time.Millisecond) // the engine commits in the background
	}
}
