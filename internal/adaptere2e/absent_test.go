package adaptere2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/internal/await"
)

// TestForkTheAdapterNeverSawIsReconciledAbsent: a stand-in on the adapter's port answers
// /describe and /probe but swallows /fork until forkgraph's webhook timeout, so the fork is
// DELIVERY_UNKNOWN and no child exists anywhere. The real adapter then starts on that port: it
// never saw the request, so /reconcile writes a tombstone and answers absent; the operation ends
// FAILED, and a new request id on the same turn forks normally.
func TestForkTheAdapterNeverSawIsReconciledAbsent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	statePath := filepath.Join(dir, "adapter.json")
	standIn := swallowingAdapter(t)
	server := start(t, "forkgraph", serverBin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "forkgraph.db"),
		"-no-seed", "-webhook-url", standIn.URL, "-webhook-timeout", "1s")
	turn := reportForkableSession(t, server.base, "src")
	var started struct{ ForkSession operation }
	mustGQL(t, server.base, forkMutation, forkInput("src", turn, "req-lost"), &started)
	id := started.ForkSession.ID
	await.State(t, unknownWithin, "the swallowed fork to become DELIVERY_UNKNOWN", func() (bool, string) {
		got := readOperation(t, server.base, id)
		return got.Status == "UNKNOWN" && got.Phase == "DELIVERY_UNKNOWN", fmt.Sprintf("%+v", got)
	})

	addr := strings.TrimPrefix(standIn.URL, "http://")
	standIn.Close()
	startAdapterOn(t, addr, "-state", statePath)
	got := reconcileNow(t, server.base, id, "FAILED")
	await.State(t, committedWithin, "the lost fork to fail as absent", func() (bool, string) {
		if got.Status == "UNKNOWN" {
			got = reconcileNow(t, server.base, id, "FAILED")
		}
		got = readOperation(t, server.base, id)
		return got.Status == "FAILED", fmt.Sprintf("%+v", got)
	})
	if got.Phase != "FAILED" || got.ErrorReason != "reconciled_absent" || got.Session != nil ||
		!strings.Contains(got.Error, "no fork was received") {
		t.Fatalf("absent fork ended %+v, want FAILED, reconciled_absent, the adapter's explanation, no session", got)
	}
	st := readAdapterState(t, statePath)
	if rec := st.Requests[workspace]["req-lost"]; rec.Outcome != "absent" || rec.ForkDeliveries != 0 || st.children("req-lost") != 0 {
		t.Fatalf("adapter record %+v with %d children, want a tombstone, no delivery, no child", rec, st.children("req-lost"))
	}

	var again struct{ ForkSession operation }
	mustGQL(t, server.base, forkMutation, forkInput("src", turn, "req-after-absent"), &again)
	if again.ForkSession.ID == id {
		t.Fatalf("a new request id on the freed turn got the failed operation back")
	}
	await.State(t, committedWithin, "the new fork to commit", func() (bool, string) {
		got := readOperation(t, server.base, again.ForkSession.ID)
		return got.Status == "COMMITTED", fmt.Sprintf("%+v", got)
	})
}

// swallowingAdapter answers /describe and /probe as the reference adapter does and holds every
// /fork without an answer until the caller gives up: a provider that lost the request. It
// listens on 127.0.0.1, like everything here.
func swallowingAdapter(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/describe":
			_, _ = fmt.Fprint(w, `{"kind":"reference-adapter","version":"1","stateBindingMode":"host_copy","throughTurn":true,"reconcile":true}`)
		case "/probe":
			var in struct{ Probes []json.RawMessage }
			_ = json.NewDecoder(r.Body).Decode(&in)
			answers := make([]bool, len(in.Probes))
			for i := range answers {
				answers[i] = true
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"forkable": answers})
		default:
			_, _ = io.Copy(io.Discard, r.Body) // read in full, so the server notices the caller leave
			select {
			case <-r.Context().Done():
			case <-t.Context().Done():
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
