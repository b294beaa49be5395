package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The example against the real server, built from the repository root and started on a free
// port with a fresh database and the demo workspace: it lists the sessions, forks one, follows
// the fork over the websocket to COMMITTED and acknowledges it; the server then holds the
// acknowledged operation under the request id the example sent.
func TestListForkFollowAgainstTheServer(t *testing.T) {
	base := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, []string{"-url", base + "/graphql", "-workspace", "demo", "-request-id", "go-client-test"}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	printed := out.String()
	for _, want := range []string{"sessions in demo", "forking ", "COMMITTED COMMITTED", "acknowledged at "} {
		if !strings.Contains(printed, want) {
			t.Errorf("the example did not print %q:\n%s", want, printed)
		}
	}

	body, _ := json.Marshal(map[string]any{"query": `{ forkOperations(workspaceId: "demo") { edges { node { requestId status acknowledgedAt } } } }`})
	resp, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Data struct {
			ForkOperations struct {
				Edges []struct {
					Node struct {
						RequestID      string `json:"requestId"`
						Status         string
						AcknowledgedAt *string
					}
				}
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range got.Data.ForkOperations.Edges {
		if e.Node.RequestID == "go-client-test" {
			found = e.Node.Status == "COMMITTED" && e.Node.AcknowledgedAt != nil
		}
	}
	if !found {
		t.Errorf("the server has no acknowledged, committed operation go-client-test: %+v", got.Data.ForkOperations.Edges)
	}
}

// startServer builds the forkgraph server from the repository root and runs it until the test
// ends; it returns the server's base URL once it listens.
func startServer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "forkgraph")
	// go run keeps the executable it links in Go's build cache, so an unchanged tree is not linked
	// again (the root module's internal/testbin does the same; this module cannot import it).
	build := exec.Command("go", "run", "-exec", "cp", ".", bin)
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the server: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "fg.db"), "-sim-latency", "50ms")
	cmd.Env = append(os.Environ(), "FORKGRAPH_TOKENS=", "FORKGRAPH_NO_SEED=false")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	addrs := make(chan string, 1)
	go func() {
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on http://"); ok {
				addrs <- strings.TrimSuffix(strings.Fields(rest)[0], "/")
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case addr := <-addrs:
		return "http://" + addr
	case <-exited:
		t.Fatalf("the server exited before listening:\n%s", stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("the server did not listen within 2 minutes:\n%s", stderr.String())
	}
	return ""
}
