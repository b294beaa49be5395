package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunServesUntilCancelled: run listens, says where, serves the protocol, and returns nil once
// its context ends, even with a /fork held by -fork-delay, whose child stays recorded.
func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, stdout := io.Pipe()
	path := filepath.Join(t.TempDir(), "state.json")
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-state", path, "-fork-delay", "1h"}, stdout, io.Discard)
		_ = stdout.Close()
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	var base string
	select {
	case line := <-lines:
		var ok bool
		if _, base, ok = strings.Cut(line, "listening on "); !ok {
			t.Fatalf("run printed %q", line)
		}
	case err := <-done:
		t.Fatalf("run ended before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not say where it listens within 10s")
	}
	resp, err := http.Post(strings.TrimSuffix(base, "/")+"/describe", "application/json", jsonBody(t, describeRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	var d descriptor
	_ = json.NewDecoder(resp.Body).Decode(&d)
	_ = resp.Body.Close()
	if !d.Reconcile || d.StateBindingMode != hostCopy {
		t.Fatalf("describe over run = %+v", d)
	}
	held := make(chan error, 1)
	go func() {
		resp, err := http.Post(strings.TrimSuffix(base, "/")+"/fork", "application/json", jsonBody(t, forkOf("r1")))
		if err == nil {
			_ = resp.Body.Close()
			err = fmt.Errorf("held fork answered %d", resp.StatusCode)
		}
		held <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, err := openState(path); err == nil && childrenOf(st.st, "r1") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the held fork's child was not recorded within 10s")
		}
		time.Sleep(10 * time.Millisecond) // polling the file, bounded by the deadline
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run = %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return within 10s of its context ending")
	}
	if err := <-held; err == nil || strings.Contains(err.Error(), "answered") {
		t.Fatalf("held fork: %v, want the connection closed without an answer", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "ErrNegativeForkDelay", args: []string{"-fork-delay", "-1s"}, want: "-fork-delay"},
		{name: "ErrUnknownFlag", args: []string{"-nope"}, want: "not defined"},
		{name: "ErrCorruptState", args: []string{"-state", "testdata/corrupt.json"}, want: "corrupt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), append([]string{"-addr", "127.0.0.1:0"}, tt.args...), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run(%v) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

// TestImportsOnlyTheStandardLibrary: adapter authors copy this program out of the repository, so
// it must build without forkgraph (or anything else).
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if deps := strings.Fields(string(out)); len(deps) != 1 || !strings.HasSuffix(deps[0], "/examples/provider-adapter") {
		t.Fatalf("non-standard dependencies: %v, want only the adapter itself", deps)
	}
}
