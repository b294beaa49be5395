package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// target is one server of an A/B comparison: forkgraph built from some source tree, or the
// stock gqlgen todo anchor. Every event it streams carries a tag the driver chose, so delivery
// latency is measured the same way on both: receive time minus the time the driver sent the
// mutation that caused the event.
type target interface {
	label() string
	// start builds (once) and starts a fresh server; the caller stops it.
	start(ctx context.Context) (*process, error)
	// subscription is the subscribe payload every subscriber sends.
	subscription() map[string]any
	// emit sends one mutation that makes the server stream one event tagged tag.
	emit(ctx context.Context, p *process, tag string) error
	// tagOf returns the tag of an event message, "" for anything else.
	tagOf(frame []byte) string
	// cleanup removes what start built.
	cleanup()
}

// process is a running server of a comparison.
type process struct {
	cmd    *exec.Cmd
	pid    int
	base   string // http://addr
	wsURL  string
	debug  string // forkgraph's -debug-addr base URL ("" for the anchor)
	stopFn func()
}

func (p *process) stop() { p.stopFn() }

// forkgraphTarget is forkgraph built from repo, streaming workspaceEvents of one workspace;
// each emit reports a settled turn (one event) whose turn id is the tag, or, for a marker, a
// session whose id is the tag.
type forkgraphTarget struct {
	name, repo string
	bin, dir   string
	ws         string
}

func (t *forkgraphTarget) label() string { return t.name }

func (t *forkgraphTarget) cleanup() { removeDir(t.dir) }

func (t *forkgraphTarget) start(ctx context.Context) (*process, error) {
	if t.bin == "" {
		bin, dir, err := buildServer(ctx, t.repo)
		t.dir = dir
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		t.bin = bin
	}
	olds, _ := filepath.Glob(filepath.Join(t.dir, "db*"))
	for _, old := range olds { // every start gets a fresh database
		_ = os.Remove(old)
	}
	s, err := startServer(ctx, t.bin, t.dir, "", t.name, "")
	if err != nil {
		return nil, err
	}
	t.ws = fmt.Sprintf("ab-%d", time.Now().UnixNano())
	api := &apiClient{base: s.base}
	p := &process{cmd: s.cmd, pid: s.cmd.Process.Pid, base: s.base, wsURL: s.wsURL, debug: s.debug, stopFn: s.stop}
	if err := api.seedSource(ctx, t.ws); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (t *forkgraphTarget) subscription() map[string]any {
	return map[string]any{"query": eventsQuery, "variables": map[string]any{"ws": t.ws}}
}

func (t *forkgraphTarget) emit(ctx context.Context, p *process, tag string) error {
	api := &apiClient{base: p.base}
	if strings.HasPrefix(tag, "mark-") {
		return api.reportSession(ctx, t.ws, tag)
	}
	return api.reportTurn(ctx, t.ws, sourceSession, tag)
}

var (
	turnIDKey    = []byte(`"turnId":"`)
	sessionIDKey = []byte(`"sessionId":"`)
	textKey      = []byte(`"text":"`)
)

func (t *forkgraphTarget) tagOf(frame []byte) string {
	if tag := stringAfter(frame, turnIDKey); tag != "" {
		return tag
	}
	if tag := stringAfter(frame, sessionIDKey); strings.HasPrefix(tag, "mark-") {
		return tag
	}
	return ""
}

// anchorTarget is the stock gqlgen todo server (shared/anchors/gqlgen-todo), built with its
// build.sh: subscribers follow todoAdded, each emit is createTodo whose text is the tag.
type anchorTarget struct {
	anchors string // the anchors directory (holds build.sh)
	dir     string
}

func (t *anchorTarget) label() string { return "anchor" }

func (t *anchorTarget) cleanup() { removeDir(t.dir) }

func removeDir(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

func (t *anchorTarget) start(ctx context.Context) (*process, error) {
	if t.dir == "" {
		dir, err := os.MkdirTemp("", "fanout-anchor-")
		if err != nil {
			return nil, err
		}
		t.dir = dir
		build := exec.CommandContext(ctx, "bash", filepath.Join(t.anchors, "build.sh"), "gqlgen-todo", filepath.Join(dir, "src"))
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, fmt.Errorf("build anchor: %w", err)
		}
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := strings.Cut(addr, ":")
	log, err := os.Create(filepath.Join(t.dir, "anchor.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(t.dir, "src", "server"))
	cmd.Env = append(os.Environ(), "PORT="+port)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start anchor: %w", err)
	}
	s := &server{cmd: cmd, dir: t.dir, base: "http://" + addr}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, base: s.base, wsURL: "ws://" + addr + "/query", stopFn: s.stop}
	if err := awaitAnchor(ctx, p.base); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func awaitAnchor(ctx context.Context, base string) error {
	for i := 0; i < 300 && ctx.Err() == nil; i++ {
		if err := postGraphQL(ctx, base+"/query", `{ todos { id } }`, nil); err == nil {
			return nil
		}
		sleep(ctx, 100) // an external process: poll with a deadline
	}
	return fmt.Errorf("anchor at %s not up within 30s", base)
}

func (t *anchorTarget) subscription() map[string]any {
	return map[string]any{"query": `subscription { todoAdded { id text done user { id name } } }`}
}

func (t *anchorTarget) emit(ctx context.Context, p *process, tag string) error {
	return postGraphQL(ctx, p.base+"/query", `mutation($t: String!) { createTodo(input: {text: $t, userId: "u1"}) { id } }`,
		map[string]any{"t": tag})
}

func (t *anchorTarget) tagOf(frame []byte) string { return stringAfter(frame, textKey) }

// stringAfter returns the JSON string (without escapes) that follows key in frame, or "".
func stringAfter(frame, key []byte) string {
	i := bytes.Index(frame, key)
	if i < 0 {
		return ""
	}
	rest := frame[i+len(key):]
	if j := bytes.IndexByte(rest, '"'); j > 0 {
		return string(rest[:j])
	}
	return ""
}

func postGraphQL(ctx context.Context, url, query string, vars map[string]any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out struct{ Errors []struct{ Message string } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("decode (HTTP %d): %w", resp.StatusCode, err)
	}
	if len(out.Errors) > 0 {
		return fmt.Errorf("graphql: %s", out.Errors[0].Message)
	}
	return nil
}
