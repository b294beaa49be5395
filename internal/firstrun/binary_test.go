package firstrun

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/testbin"
)

// runDeadline bounds one run of the binary that is expected to exit by itself.
const runDeadline = 60 * time.Second

// repoRoot is the repository root, where the binary is built from.
var repoRoot = filepath.Join("..", "..")

// serverBin is the forkgraph binary TestMain builds.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "firstrun-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "forkgraph")
	code := 1
	if err := buildServer(serverBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildDeadline bounds one build of the server (the machine may be busy with other builds).
const buildDeadline = 10 * time.Minute

// buildServer puts the server at bin, linked once per source tree and taken from Go's build
// cache after that (internal/testbin).
func buildServer(bin string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildDeadline)
	defer cancel()
	return testbin.Build(ctx, repoRoot, ".", bin)
}

// absRoot is repoRoot as an absolute path, which names this tree in testbin's keys.
func absRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// command is a tool run in dir for at most buildDeadline, in a process group of its own that is
// killed whole when the deadline passes or the test ends (make and go start compilers and a C
// compiler, which must not outlive the test).
func command(t *testing.T, dir, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), buildDeadline)
	t.Cleanup(cancel)
	cmd := inGroup(exec.CommandContext(ctx, name, args...))
	cmd.Dir = dir
	return cmd
}

// inGroup starts cmd in a process group of its own and makes its context's end kill the group.
func inGroup(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// result is what one run of the binary left: its exit status and its output.
type result struct {
	code           int
	stdout, stderr string
}

// lines are the non-empty lines of stderr.
func (r result) lines() []string {
	var out []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// runIn runs bin with args in dir (a fresh directory a user would start it from, so relative
// files land there) and an environment without FORKGRAPH_* settings, and waits for it to exit.
func runIn(t *testing.T, dir, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not exit within %s; stderr:\n%s", bin, args, runDeadline, stderr.String())
	}
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// cleanEnv is the test's environment without FORKGRAPH_* variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FORKGRAPH_") {
			env = append(env, kv)
		}
	}
	return env
}

// requireEmptyDir fails when the run left any file in dir.
func requireEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("the failed start left %v in its directory", names)
	}
}

// syncBuffer collects a process's output for failure messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
