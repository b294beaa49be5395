package multiinstance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// outageWithin bounds how long a server may take to serve again once its database is back.
const outageWithin = 60 * time.Second

// TestDatabaseOutageIsRetryable: issue 21. The PostgreSQL server under a running forkgraph is
// stopped (every connection ended, new ones refused) and started again. Meanwhile forkSession is
// answered HTTP 503 with Retry-After and UNAVAILABLE, retryable: true (before: 200
// INTERNAL_SERVER_ERROR), and /readyz is 503; once the database is back, the same request
// (same requestId) forks, and the fork commits.
func TestDatabaseOutageIsRetryable(t *testing.T) {
	t.Parallel()       // its own PostgreSQL server, adapter and processes
	requirePostgres(t) // the suite's PostgreSQL binaries are there; the server below is this test's own
	ctx := context.Background()
	pg, err := StartPostgresServer(ctx, filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pg.Remove(context.Background()); err != nil {
			t.Errorf("remove the test's PostgreSQL: %v", err)
		}
	})
	c := &cluster{t: t, db: pg.DSN, adapter: NewAdapter(), byName: map[string]*Instance{}}
	t.Cleanup(func() {
		for _, in := range c.byName {
			in.Kill()
		}
		c.adapter.Close()
	})
	a := c.start("a")
	api := client(a)
	if err := api.ReportSource(ctx, workspace, "src", "simulated", "", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Fork(ctx, workspace, "src", "src-t1", "before"); err != nil {
		t.Fatalf("a fork before the outage: %v", err)
	}

	if err := pg.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	status, header, errs := postFork(t, a.GraphQLURL(), "during")
	if status != http.StatusServiceUnavailable || header.Get("Retry-After") == "" {
		t.Fatalf("forkSession during the outage: HTTP %d (Retry-After %q), errors %+v; want 503 with Retry-After",
			status, header.Get("Retry-After"), errs)
	}
	if len(errs) == 0 {
		t.Fatal("forkSession during the outage answered no error")
	}
	for _, e := range errs {
		if e.Code() != "UNAVAILABLE" || e.Extensions["retryable"] != true {
			t.Fatalf("forkSession during the outage: error %+v, want UNAVAILABLE with retryable: true", e)
		}
	}
	if got := readyz(t, a); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz during the outage: %d, want 503", got)
	}

	if err := pg.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(outageWithin)
	for {
		status, _, errs = postFork(t, a.GraphQLURL(), "during")
		if status == http.StatusOK && len(errs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after the database came back, forkSession still answers HTTP %d %+v", outageWithin, status, errs)
		}
		time.Sleep(200 * time.Millisecond) // the server reconnects by itself; bounded by the deadline
	}
	op, err := api.Fork(ctx, workspace, "src", "src-t1", "during") // the same request: its operation
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.AwaitOperation(ctx, workspace, op.ID, outageWithin, func(o Operation) bool { return o.Status == "COMMITTED" }); err != nil {
		t.Fatalf("the fork asked for during the outage, retried after it: %v", err)
	}
	if got := readyz(t, a); got != http.StatusOK {
		t.Fatalf("/readyz after the outage: %d, want 200", got)
	}
}

// postFork asks instance url for a fork of src through src-t1 with requestID and returns the HTTP
// status, the headers and the errors of the answer.
func postFork(t *testing.T, url, requestID string) (int, http.Header, []GraphQLError) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"query": `mutation($input: ForkSessionInput!) { forkSession(input: $input) { id status } }`,
		"variables": map[string]any{"input": map[string]any{"workspaceId": workspace, "sourceSessionId": "src",
			"throughTurnId": "src-t1", "requestId": requestID}},
	})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct{ Errors []GraphQLError }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("HTTP %d, undecodable body %q: %v", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, resp.Header, out.Errors
}

func readyz(t *testing.T, in *Instance) int {
	t.Helper()
	resp, err := http.Get(in.URL() + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
