package adaptere2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/store"
)

// resumeAt asks the adapter to resume forkgraph session sessionID as provider session psid, as a
// runtime does; the adapter asks forkgraph's verifyForkedSession first.
func resumeAt(t *testing.T, adapterBase, sessionID, psid string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"workspaceId": workspace, "sessionId": sessionID, "providerSessionId": psid})
	resp, err := client.Post(adapterBase+"/resume", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /resume: %v", err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST /resume answered %d: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, out
}

// TestRuntimeVerifiesAForkBeforeResuming: the reference adapter, started with -forkgraph-url,
// resumes a committed fork's target as the provider session the fork made, and an original
// session; it refuses the target as another provider session, and, once the target's provider
// session no longer matches its fork (a database changed behind the server, between two runs),
// refuses to resume it at all, with forkgraph's reason.
func TestRuntimeVerifiesAForkBeforeResuming(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "forkgraph.db")
	statePath := filepath.Join(dir, "adapter.json")
	adapter := start(t, "provider-adapter", adapterBin, "-addr", "127.0.0.1:0", "-state", statePath)
	serverArgs := []string{"-addr", "127.0.0.1:0", "-db", dbPath, "-no-seed", "-webhook-url", adapter.base}
	server := start(t, "forkgraph", serverBin, serverArgs...)
	turn := reportForkableSession(t, server.base, "src-resume")
	var started struct{ ForkSession operation }
	mustGQL(t, server.base, forkMutation, forkInput("src-resume", turn, "req-resume"), &started)
	var committed operation
	await.State(t, committedWithin, "the fork to commit", func() (bool, string) {
		committed = readOperation(t, server.base, started.ForkSession.ID)
		return committed.Status == "COMMITTED", fmt.Sprintf("%+v", committed)
	})
	target, child := committed.Session.ID, committed.Session.ProviderSessionID

	// A runtime process of its own, asking this server.
	runtime := start(t, "provider-adapter", adapterBin, "-addr", "127.0.0.1:0", "-state", statePath+".runtime",
		"-forkgraph-url", server.base+"/graphql")
	if status, out := resumeAt(t, runtime.base, target, child); status != http.StatusOK || out["status"] != "VERIFIED" {
		t.Fatalf("resume of the fork: %d %v", status, out)
	}
	if status, out := resumeAt(t, runtime.base, "src-resume", "thread-src-resume"); status != http.StatusOK || out["status"] != "NOT_A_FORK" {
		t.Fatalf("resume of the source: %d %v", status, out)
	}
	if status, out := resumeAt(t, runtime.base, target, "thread-src-resume"); status != http.StatusConflict || out["reason"] != "provider_session_mismatch" {
		t.Fatalf("resume of the fork as the source's provider session: %d %v", status, out)
	}

	server.kill(t)
	// The store takes local ids; the runtime asks the server at the same address.
	movedBehindTheServer(t, dbPath, strings.TrimPrefix(target, "Session:"+workspace+":"))
	waitPortFree(t, server.addr)
	start(t, "forkgraph", serverBin, append([]string{"-addr", server.addr}, serverArgs[2:]...)...)
	status, out := resumeAt(t, runtime.base, target, child)
	if status != http.StatusConflict || out["status"] != "UNVERIFIED" || out["reason"] != forkengine.ReasonProviderSessionMismatch {
		t.Fatalf("resume of a fork whose identity no longer holds: %d %v", status, out)
	}
}

// movedBehindTheServer points session id at another provider session in the stopped server's
// database, as no report may.
func movedBehindTheServer(t *testing.T, dbPath, id string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DSN: dbPath, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.GetSession(ctx, workspace, id)
	if err != nil {
		t.Fatal(err)
	}
	s.ProviderSessionID = "thread-elsewhere"
	if err := db.Update(ctx, func(tx forkengine.Tx) error { return tx.UpsertSession(ctx, s) }); err != nil {
		t.Fatal(err)
	}
}
