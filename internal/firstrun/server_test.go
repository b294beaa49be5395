package firstrun

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server is the built binary serving in the background.
type server struct {
	base   string
	stderr *syncBuffer
}

// startServer runs the binary from a fresh directory on 127.0.0.1:0 and returns once it prints
// the address it listens on; the test's end stops it (SIGTERM, then SIGKILL) and waits.
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, serverBin, append([]string{"-addr", "127.0.0.1:0", "-db", "fg.db"}, args...)...)
	cmd.Dir, cmd.Env = t.TempDir(), cleanEnv()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second // then SIGKILL
	s := &server{stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	addrs := make(chan string, 1)
	go func() {
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on http://"); ok {
				addrs <- strings.TrimSuffix(strings.Fields(rest)[0], "/")
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	select {
	case addr := <-addrs:
		s.base = "http://" + addr
	case err := <-exited:
		t.Fatalf("the server exited before listening (%v):\n%s", err, s.stderr)
	case <-time.After(2 * time.Minute):
		t.Fatalf("the server did not listen within 2 minutes:\n%s", s.stderr)
	}
	return s
}
