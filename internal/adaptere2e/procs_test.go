package adaptere2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/await"
	"github.com/forkgraph/forkgraph/internal/testbin"
)

// startDeadline bounds how long a process may take to say where it listens.
const startDeadline = 30 * time.Second

// Binaries built once by TestMain. Every test starts its own processes on their own files and
// ports, so the tests run in parallel: their waits (reconcile passes, a killed process's port)
// overlap.
var serverBin, adapterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "adaptere2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin, adapterBin = filepath.Join(dir, "forkgraph"), filepath.Join(dir, "provider-adapter")
	code := 1
	if err := build(serverBin, "."); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else if err := build(adapterBin, "./examples/provider-adapter"); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// build puts pkg, relative to the repository root, at bin, linked once per source tree and taken
// from Go's build cache after that (internal/testbin).
func build(bin, pkg string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return testbin.Build(ctx, filepath.Join("..", ".."), pkg, bin)
}

// process is a running server or adapter.
type process struct {
	name   string
	cmd    *exec.Cmd
	base   string // http://ADDR, no trailing slash
	addr   string
	stderr *lockedBuffer
	done   chan struct{}
}

// start runs bin with args and waits until it prints "... listening on http://ADDR/".
func start(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	addrs := make(chan string, 1)
	go func() {
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on http://"); ok {
				addrs <- strings.TrimSuffix(strings.Fields(rest)[0], "/")
			}
		}
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill(t) })
	select {
	case p.addr = <-addrs:
		p.base = "http://" + p.addr
		return p
	case <-p.done:
		t.Fatalf("%s exited before listening: %s", name, p.stderr)
	case <-time.After(startDeadline):
		t.Fatalf("%s did not listen within %s: %s", name, startDeadline, p.stderr)
	}
	return nil
}

// kill ends the process with SIGKILL (no deferred code, no clean close) and waits for it.
func (p *process) kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(startDeadline):
		t.Errorf("%s did not exit within %s of SIGKILL", p.name, startDeadline)
	}
}

// startAdapterOn starts the adapter on addr again, once the killed one's port can be bound.
func startAdapterOn(t *testing.T, addr string, args ...string) *process {
	t.Helper()
	waitPortFree(t, addr)
	return start(t, "provider-adapter", adapterBin, append([]string{"-addr", addr}, args...)...)
}

// waitPortFree returns once addr, a killed process's address, can be bound again.
func waitPortFree(t *testing.T, addr string) {
	t.Helper()
	await.State(t, startDeadline, addr+" to be free after its process was killed", func() (bool, string) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return false, err.Error()
		}
		_ = ln.Close()
		return true, ""
	})
}

// lockedBuffer collects a process's stderr for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
