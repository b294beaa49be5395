package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// target is one server under measurement: the anchor or a forkgraph build. A forkgraph is
// built and run by internal/multiinstance, as the other benchmarks' servers are; the anchor is
// a plain process told its port by PORT.
type target struct {
	name      string
	bin       string
	dir       string
	forkgraph bool
	inst      *multiinstance.Instance // a running forkgraph
	cmd       *exec.Cmd               // the running anchor
	url       string                  // POST endpoint
	base      string
	debug     string   // forkgraph's -debug-addr (pprof)
	gogc      string   // GOGC for the process; empty: inherited
	env       []string // more environment (-forkgraph-env, -baseline-env)
}

// pid is the running server's process id (its CPU is read from /proc).
func (t *target) pid() int {
	if t.inst != nil {
		return t.inst.Pid()
	}
	return t.cmd.Process.Pid
}

// buildTargets builds the anchor and forkgraph (and the baseline revision, when asked for).
func buildTargets(ctx context.Context, o options, dir string) ([]*target, error) {
	anchorDir := filepath.Join(dir, "anchor")
	build := exec.CommandContext(ctx, "bash", filepath.Join(o.anchors, "build.sh"), "gqlgen-shape", anchorDir)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build the anchor: %w", err)
	}
	targets := []*target{{name: "anchor", bin: filepath.Join(anchorDir, "server"), dir: anchorDir}}
	if o.baselineRev != "" {
		src := filepath.Join(dir, "baseline-src")
		if err := exportRevision(ctx, o.repo, o.baselineRev, src); err != nil {
			return nil, err
		}
		t, err := buildForkgraph(ctx, "baseline", src, filepath.Join(dir, "baseline"))
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	t, err := buildForkgraph(ctx, "forkgraph", o.repo, filepath.Join(dir, "forkgraph"))
	if err != nil {
		return nil, err
	}
	return append(targets, t), nil
}

// exportRevision writes the tree of rev (git archive) into dst, so a baseline builds without
// touching any work tree.
func exportRevision(ctx context.Context, repo, rev, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	archive := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", rev)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dst)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin, archive.Stderr, untar.Stderr = pipe, os.Stderr, os.Stderr
	if err := untar.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %w", rev, err)
	}
	return untar.Wait()
}

func buildForkgraph(ctx context.Context, name, src, dir string) (*target, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bin, err := multiinstance.Build(ctx, src, dir, false)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", name, err)
	}
	return &target{name: name, bin: bin, dir: dir, forkgraph: true}, nil
}

// start runs the server on a free loopback port; a forkgraph gets a fresh SQLite file, the
// simulated driver at zero latency, no demo seed, and is then seeded through its API.
func (t *target) start(ctx context.Context) error {
	env := t.env
	if t.gogc != "" {
		env = append(env, "GOGC="+t.gogc)
	}
	if t.forkgraph {
		return t.startForkgraph(ctx, env)
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(t.dir, "server.log"))
	if err != nil {
		return err
	}
	t.base = "http://" + addr
	t.url = t.base + "/graphql"
	_, port, _ := net.SplitHostPort(addr)
	t.cmd = exec.Command(t.bin)
	t.cmd.Env = append(append(os.Environ(), "PORT="+port), env...)
	t.cmd.Stdout, t.cmd.Stderr = logFile, logFile
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", t.name, err)
	}
	return t.awaitListening(ctx)
}

func (t *target) startForkgraph(ctx context.Context, env []string) error {
	debug, err := freeAddr()
	if err != nil {
		return err
	}
	t.debug = "http://" + debug
	t.inst, err = multiinstance.Start(ctx, multiinstance.Options{Name: t.name, Binary: t.bin,
		DB: filepath.Join(t.dir, "bench.db"), LogDir: t.dir, Extra: []string{"-debug-addr", debug}, Env: env})
	if err != nil {
		return err
	}
	t.base, t.url = t.inst.URL(), t.inst.GraphQLURL()
	start := time.Now()
	if err := seed(ctx, &api{url: t.url}); err != nil {
		return fmt.Errorf("seed %s: %w", t.name, err)
	}
	fmt.Printf("%s: seeded in %s\n", t.name, time.Since(start).Round(time.Millisecond))
	return nil
}

// awaitListening waits for the anchor to accept connections.
func (t *target) awaitListening(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		conn, err := net.Dial("tcp", strings.TrimPrefix(t.base, "http://"))
		if err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond) // an external process: poll with a deadline
	}
	return fmt.Errorf("%s not listening within 30s (log in %s)", t.name, t.dir)
}

func (t *target) stop() {
	if t.inst != nil {
		t.inst.Stop()
		t.inst = nil
		return
	}
	if t.cmd != nil && t.cmd.Process != nil {
		t.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { t.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.cmd.Process.Kill()
		}
	}
}

// check sends the query once and fails unless it answers 100 edges without errors, each latest
// turn with its messages, and forkedFrom on all but one session.
func (t *target) check(ctx context.Context, query []byte) error {
	body, err := post(ctx, http.DefaultClient, t.url, query)
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	var out struct {
		Errors []json.RawMessage
		Data   struct {
			Sessions struct {
				TotalCount int
				Edges      []struct {
					Node struct {
						LatestTurn *struct {
							ProviderForkBindingAvailable bool
							Messages                     []json.RawMessage
						}
						ForkedFrom *struct{ SourceSession *struct{ Title string } }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return fmt.Errorf("%s: decode: %w", t.name, err)
	}
	edges, forked, forkable := out.Data.Sessions.Edges, 0, 0
	for _, e := range edges {
		if e.Node.LatestTurn == nil || len(e.Node.LatestTurn.Messages) != 2 {
			return fmt.Errorf("%s: a session without a latest turn of two messages: %.300s", t.name, body)
		}
		if e.Node.LatestTurn.ProviderForkBindingAvailable {
			forkable++
		}
		if e.Node.ForkedFrom != nil && e.Node.ForkedFrom.SourceSession != nil {
			forked++
		}
	}
	if len(out.Errors) > 0 || len(edges) != 100 || forked != 99 {
		return fmt.Errorf("%s: want 100 edges, 99 forked, no errors; got %d edges, %d forked: %.300s", t.name, len(edges), forked, body)
	}
	fmt.Printf("%s: 100 edges, %d forkable latest turns, 99 forkedFrom, %d bytes\n", t.name, forkable, len(body))
	return nil
}

func post(ctx context.Context, client *http.Client, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, out)
	}
	return out, err
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
