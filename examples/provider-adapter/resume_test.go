package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// fakeForkgraph answers verifyForkedSession with answer (a GraphQL response body) and records the
// variables and the Authorization header of the last request.
func fakeForkgraph(t *testing.T, answer *string) (*forkgraphClient, *atomic.Value) {
	t.Helper()
	var seen atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Variables map[string]string `json:"variables"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		body.Variables["authorization"] = r.Header.Get("Authorization")
		seen.Store(body.Variables)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(*answer))
	}))
	t.Cleanup(srv.Close)
	return &forkgraphClient{url: srv.URL + "/graphql", token: "tok", http: srv.Client()}, &seen
}

func verified(status, reason, psid string) string {
	return `{"data":{"verifyForkedSession":{"status":"` + status + `","reason":"` + reason +
		`","session":{"providerSessionId":"` + psid + `"}}}}`
}

// TestResumeAsksForkgraphFirst: a resume goes ahead only when forkgraph verifies the session (or
// it is no fork) and the provider session is the session's; everything else fails closed.
func TestResumeAsksForkgraphFirst(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	answer := ""
	fg, seen := fakeForkgraph(t, &answer)
	ta.forkgraph = fg
	req := resumeRequest{WorkspaceID: "ws", SessionID: "fork-1", ProviderSessionID: "child-1"}
	cases := []struct {
		name    string
		answer  string
		status  int
		resumed bool
		reason  string
	}{
		{"Verified", verified("VERIFIED", "", "child-1"), http.StatusOK, true, ""},
		{"NotAFork", verified("NOT_A_FORK", "", "child-1"), http.StatusOK, true, ""},
		{"Unverified", verified("UNVERIFIED", "operation_not_committed", "child-1"), http.StatusConflict, false, "operation_not_committed"},
		{"AnotherProviderSession", verified("VERIFIED", "", "child-2"), http.StatusConflict, false, "provider_session_mismatch"},
		{"ForkgraphError", `{"errors":[{"message":"session not found","extensions":{"code":"NOT_FOUND"}}],"data":null}`,
			http.StatusServiceUnavailable, false, ""},
		{"NotGraphQL", `<html>bad gateway</html>`, http.StatusServiceUnavailable, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			answer = c.answer
			before := ta.onDisk(t).Resumes["child-1"]
			var out resumeResponse
			status := ta.post(t, "/resume", req, &out)
			if status != c.status || out.Resumed != c.resumed || out.Reason != c.reason {
				t.Fatalf("resume = %d %+v, want %d resumed=%v reason %q", status, out, c.status, c.resumed, c.reason)
			}
			want := before
			if c.resumed {
				want++
			}
			if got := ta.onDisk(t).Resumes["child-1"]; got != want {
				t.Fatalf("resumes recorded %d, want %d", got, want)
			}
			vars := seen.Load().(map[string]string)
			if vars["ws"] != "ws" || vars["id"] != "fork-1" || vars["authorization"] != "Bearer tok" {
				t.Fatalf("forkgraph was asked %v", vars)
			}
		})
	}

	ta.forkgraph = nil
	var out resumeResponse
	if status := ta.post(t, "/resume", req, &out); status != http.StatusServiceUnavailable || out.Resumed {
		t.Fatalf("without a forkgraph to ask: %d %+v", status, out)
	}
	ta.forkgraph = &forkgraphClient{url: "http://127.0.0.1:1/graphql", http: http.DefaultClient}
	if status := ta.post(t, "/resume", req, &out); status != http.StatusServiceUnavailable || out.Resumed {
		t.Fatalf("forkgraph down: %d %+v", status, out)
	}
}
