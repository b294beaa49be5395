package main

import (
	"net/http"
	"testing"
)

// forkBy is forkOf(rid) asked by workspace ws for provider session source.
func forkBy(ws, rid, source string) forkRequest {
	req := forkOf(rid)
	req.WorkspaceID, req.Source.WorkspaceID, req.Source.ProviderSessionID = ws, ws, source
	return req
}

// TestForkOfAnotherWorkspacesProviderSessionIsForbidden: issue 21's case. Workspace "ws" forks
// thread-1 first, so thread-1 is its; a fork of thread-1 asked by workspace "other" is refused
// (403, rejected) and makes nothing, and so is one of the child made for "ws". What the adapter
// learned survives a restart.
func TestForkOfAnotherWorkspacesProviderSessionIsForbidden(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	status, mine := ta.fork(t, forkBy("ws", "r1", "thread-1"))
	if status != http.StatusOK || mine.Disposition != dispositionAccepted {
		t.Fatalf("the first workspace's fork = %d %+v, want accepted", status, mine)
	}
	for name, source := range map[string]string{"root": "thread-1", "child": mine.ProviderSessionID} {
		status, got := ta.fork(t, forkBy("other", "r-"+name, source))
		if status != http.StatusForbidden || got.Disposition != dispositionRejected || got.ProviderSessionID != "" {
			t.Fatalf("%s of ws forked by other = %d %+v, want 403 rejected without a child", name, status, got)
		}
	}
	st := ta.onDisk(t)
	if len(st.Requests["other"]) != 0 || st.Roots["thread-1"] != "ws" || st.Sessions[mine.ProviderSessionID].WorkspaceID != "ws" {
		t.Fatalf("state after the refusals: roots %v, other's requests %v", st.Roots, st.Requests["other"])
	}
	if status, got := ta.fork(t, forkBy("other", "r2", "thread-2")); status != http.StatusOK || got.Disposition != dispositionAccepted {
		t.Fatalf("other's fork of a session nobody owns = %d %+v, want accepted", status, got)
	}
}

// A probe of another workspace's provider session says false, as if it could not be forked; the
// owner's says true. A probe tells nothing of whose it is.
func TestProbeOfAnotherWorkspacesProviderSessionIsFalse(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	if status, _ := ta.fork(t, forkBy("ws", "r1", "thread-1")); status != http.StatusOK {
		t.Fatalf("fork status %d", status)
	}
	probe := func(ws, source string) bool {
		var req probeRequest
		session := forkBy(ws, "p", source).Source
		req.WorkspaceID = ws
		req.Probes = append(req.Probes, struct {
			Session wireSession `json:"session"`
			Turn    wireTurn    `json:"turn"`
		}{session, boundTurn("t1", 1)})
		var got probeResponse
		if status := ta.post(t, "/probe", req, &got); status != http.StatusOK || len(got.Forkable) != 1 {
			t.Fatalf("probe = %d %v", status, got.Forkable)
		}
		return got.Forkable[0]
	}
	if !probe("ws", "thread-1") || probe("other", "thread-1") || !probe("other", "thread-9") {
		t.Fatalf("probes: owner %v, other %v, other's unused session %v; want true, false, true",
			probe("ws", "thread-1"), probe("other", "thread-1"), probe("other", "thread-9"))
	}
}

// A reconcile asked by another workspace about a fork of the owner's provider session is refused
// (403, unknown) and writes nothing: not even a tombstone, which would be a fact about it.
func TestReconcileOfAnotherWorkspacesProviderSessionIsForbidden(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	if status, _ := ta.fork(t, forkBy("ws", "r1", "thread-1")); status != http.StatusOK {
		t.Fatalf("fork status %d", status)
	}
	status, got := ta.reconcile(t, forkBy("other", "r1", "thread-1"))
	if status != http.StatusForbidden || got.Answer != "unknown" || got.ProviderSessionID != "" {
		t.Fatalf("reconcile by other = %d %+v, want 403 unknown", status, got)
	}
	if st := ta.onDisk(t); len(st.Requests["other"]) != 0 {
		t.Fatalf("the refused reconcile wrote %v", st.Requests["other"])
	}
}

// A fork whose source names another workspace than the request is malformed.
func TestForkOfASourceOfAnotherWorkspaceIsRejected(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	req := forkBy("ws", "r1", "thread-1")
	req.Source.WorkspaceID = "other"
	if status, got := ta.fork(t, req); status != http.StatusBadRequest || got.Disposition != dispositionRejected {
		t.Fatalf("fork = %d %+v, want 400 rejected", status, got)
	}
}
