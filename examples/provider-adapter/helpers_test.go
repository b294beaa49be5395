package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// testAdapter is an adapter on a state file, served on 127.0.0.1.
type testAdapter struct {
	*adapter
	url  string
	path string
}

// newTestAdapter serves an adapter whose state is at path (a new file in a temp dir when "").
func newTestAdapter(t *testing.T, path string, forkDelay time.Duration) *testAdapter {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "state.json")
	}
	st, err := openState(path)
	if err != nil {
		t.Fatalf("openState: %v", err)
	}
	var n atomic.Int64
	a := &adapter{state: st, forkDelay: forkDelay, now: time.Now, log: log.New(io.Discard, "", 0),
		newID: func() (string, error) { return fmt.Sprintf("child-%d-%d", time.Now().UnixNano(), n.Add(1)), nil }}
	srv := httptest.NewServer(a.routes())
	t.Cleanup(srv.Close)
	return &testAdapter{adapter: a, url: srv.URL, path: path}
}

// post sends body to path and decodes the answer into out, returning the status.
func (ta *testAdapter) post(t *testing.T, path string, body any, out any) int {
	t.Helper()
	payload, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, ta.url+path, bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := body.(forkRequest); ok {
		req.Header.Set(operationHeader, f.OperationID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("POST %s: decode answer: %v", path, err)
	}
	return resp.StatusCode
}

func (ta *testAdapter) fork(t *testing.T, req forkRequest) (int, forkResponse) {
	t.Helper()
	var out forkResponse
	return ta.post(t, "/fork", req, &out), out
}

func (ta *testAdapter) reconcile(t *testing.T, req forkRequest) (int, reconcileResponse) {
	t.Helper()
	var out reconcileResponse
	req.Attempt = 1
	return ta.post(t, "/reconcile", req, &out), out
}

// onDisk reads the state file as a restarted adapter would.
func (ta *testAdapter) onDisk(t *testing.T) state {
	t.Helper()
	f, err := openState(ta.path)
	if err != nil {
		t.Fatalf("openState: %v", err)
	}
	return f.st
}

func boundTurn(id string, seq int64) wireTurn {
	return wireTurn{ID: id, SessionID: "src", Sequence: seq, Phase: "settled", ProviderTurnID: "pt-" + id,
		ProviderTurnBinding: json.RawMessage(`{"rollout":"r-` + id + `"}`)}
}

// forkOf is a valid fork request for request id rid (operation "op-"+rid).
func forkOf(rid string) forkRequest {
	turns := []wireTurn{boundTurn("t1", 1), boundTurn("t2", 2)}
	return forkRequest{
		WorkspaceID: "ws", OperationID: "op-" + rid, RequestID: rid,
		Source:      wireSession{WorkspaceID: "ws", ID: "src", Provider: "webhook", ProviderSessionID: "thread-1"},
		ThroughTurn: turns[1], PrefixTurns: len(turns), BoundTurns: len(turns), TargetSessionID: "src-fork", TargetTitle: "Plan (2)",
		Descriptor: descriptor{Kind: "reference-adapter", Version: "1", StateBindingMode: hostCopy, ThroughTurn: true, Reconcile: true},
	}
}

// childrenOf counts the provider sessions made for request id rid.
func childrenOf(st state, rid string) int {
	n := 0
	for _, s := range st.Sessions {
		if s.WorkspaceID == "ws" && s.RequestID == rid {
			n++
		}
	}
	return n
}
