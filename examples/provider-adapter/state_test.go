package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func jsonBody(t *testing.T, v any) io.Reader {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(data)
}

// TestStateSurvivesRestart: a new adapter on the same file has the children, answers the same
// child for a repeated /fork and finds it on /reconcile.
func TestStateSurvivesRestart(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	_, forked := ta.fork(t, forkOf("r1"))
	restarted := newTestAdapter(t, ta.path, 0)
	if _, again := restarted.fork(t, forkOf("r1")); again.ProviderSessionID != forked.ProviderSessionID {
		t.Fatalf("fork after restart = %+v, want child %s", again, forked.ProviderSessionID)
	}
	if _, got := restarted.reconcile(t, forkOf("r1")); got.Answer != answerFound || got.ProviderSessionID != forked.ProviderSessionID {
		t.Fatalf("reconcile after restart = %+v", got)
	}
	if n := childrenOf(restarted.onDisk(t), "r1"); n != 1 {
		t.Fatalf("%d children for r1 after restart, want 1", n)
	}
}

// TestStateWritesLeaveNoTemporaryFiles: each change replaces the file by rename.
func TestStateWritesLeaveNoTemporaryFiles(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	ta.fork(t, forkOf("r1"))
	ta.reconcile(t, forkOf("r2"))
	entries, err := os.ReadDir(filepath.Dir(ta.path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(ta.path) {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("state directory holds %v, want only %s", names, filepath.Base(ta.path))
	}
}

func TestOpenState(t *testing.T) {
	tests := []struct {
		name    string
		content *string
		wantErr string
	}{
		{name: "OKMissingFileIsEmpty"},
		{name: "OKEmptyObject", content: ptr(`{}`)},
		{name: "ErrCorruptFile", content: ptr(`{"sessions":`), wantErr: "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			if tt.content != nil {
				if err := os.WriteFile(path, []byte(*tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			f, err := openState(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("openState error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || f.st.Sessions == nil || f.st.Requests == nil {
				t.Fatalf("openState = %+v, %v; want an empty usable state", f, err)
			}
		})
	}
}

func ptr(s string) *string { return &s }
