package multiinstance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/forkgraph/forkgraph/internal/testbin"
)

// StartTimeout bounds how long a server may take to print its listening line: generous, because
// the first start migrates the schema and two cores are shared with everything else.
const StartTimeout = 60 * time.Second

// Build puts the server of repoRoot in dir and returns the binary's path; it is linked once per
// source tree and taken from Go's build cache after that (internal/testbin). With race the
// server is built with the race detector, which then reports to the instance's log (DataRace).
func Build(ctx context.Context, repoRoot, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "forkgraph")
	var flags []string
	if race {
		flags = append(flags, "-race")
	}
	if err := testbin.Build(ctx, repoRoot, ".", bin, flags...); err != nil {
		return "", fmt.Errorf("build server in %s: %w", repoRoot, err)
	}
	return bin, nil
}

// Options say how to start one instance. Empty fields are left to the server's defaults.
type Options struct {
	Name       string        // what logs and errors call the instance (default: InstanceID)
	Binary     string        // the server binary (Build)
	DB         string        // -db: a SQLite path or a postgres:// URL
	InstanceID string        // -instance-id
	ForkLease  time.Duration // -fork-lease
	EventPoll  time.Duration // -event-poll
	WebhookURL string        // -webhook-url
	LogDir     string        // where the instance's log file goes
	Extra      []string      // further flags, passed as they are
	Env        []string      // further environment (KEY=value), added to this process's own
}

func (o Options) args() []string {
	args := []string{"-addr", "127.0.0.1:0", "-no-seed", "-sim-latency", "0s", "-db", o.DB}
	if o.InstanceID != "" {
		args = append(args, "-instance-id", o.InstanceID)
	}
	if o.ForkLease > 0 {
		args = append(args, "-fork-lease", o.ForkLease.String())
	}
	if o.EventPoll > 0 {
		args = append(args, "-event-poll", o.EventPoll.String())
	}
	if o.WebhookURL != "" {
		args = append(args, "-webhook-url", o.WebhookURL)
	}
	return append(args, o.Extra...)
}

// Instance is one running server process.
type Instance struct {
	Name    string // Options.Name, or the instance id, or "instance"
	Addr    string // host:port it listens on (loopback)
	LogPath string // its stdout and stderr

	cmd     *exec.Cmd
	waitErr error
	exited  chan struct{}
}

// Start runs a server and returns once it has printed its listening line and /healthz answers
// 200. The process is not stopped when ctx ends; call Kill or Stop.
func Start(ctx context.Context, o Options) (*Instance, error) {
	name := o.Name
	if name == "" {
		name = o.InstanceID
	}
	if name == "" {
		name = "instance"
	}
	logFile, err := os.CreateTemp(o.LogDir, "server-"+name+"-*.log")
	if err != nil {
		return nil, fmt.Errorf("instance log: %w", err)
	}
	cmd := exec.Command(o.Binary, o.args()...)
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	in := &Instance{Name: name, LogPath: logFile.Name(), cmd: cmd, exited: make(chan struct{})}
	addrs := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		in.copyStdout(stdout, logFile, addrs)
	}()
	go func() {
		<-copied // Wait closes the pipe, so every read of it must be over first
		in.waitErr = cmd.Wait()
		logFile.Close()
		close(in.exited)
	}()
	if err := in.awaitListening(ctx, addrs); err != nil {
		in.Kill()
		return nil, fmt.Errorf("%w\n--- %s log ---\n%s", err, name, in.Log())
	}
	return in, nil
}

// copyStdout copies the server's stdout to its log and reports the listening address.
func (in *Instance) copyStdout(stdout io.Reader, log io.Writer, addrs chan<- string) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		if _, rest, ok := strings.Cut(line, "listening on http://"); ok {
			if addr, _, ok := strings.Cut(rest, "/"); ok {
				select {
				case addrs <- addr:
				default:
				}
			}
		}
	}
}

func (in *Instance) awaitListening(ctx context.Context, addrs <-chan string) error {
	deadline := time.NewTimer(StartTimeout)
	defer deadline.Stop()
	select {
	case in.Addr = <-addrs:
	case <-in.exited:
		return fmt.Errorf("%s exited before listening: %v", in.Name, in.waitErr)
	case <-deadline.C:
		return fmt.Errorf("%s did not listen within %s", in.Name, StartTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
	return awaitHealthy(ctx, in.URL()+"/healthz", StartTimeout)
}

// awaitHealthy polls url until it answers 200, at most for limit.
func awaitHealthy(ctx context.Context, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for attempt := 0; ; attempt++ {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) || ctx.Err() != nil || attempt >= maxPolls {
			return fmt.Errorf("%s not healthy within %s after %d attempts: %v", url, limit, attempt+1, err)
		}
		time.Sleep(50 * time.Millisecond) // an external process: polled, bounded by the deadline
	}
}

// URL is the instance's base URL, http://addr.
func (in *Instance) URL() string { return "http://" + in.Addr }

// GraphQLURL is the instance's HTTP GraphQL endpoint.
func (in *Instance) GraphQLURL() string { return in.URL() + "/graphql" }

// WebsocketURL is the instance's websocket GraphQL endpoint.
func (in *Instance) WebsocketURL() string { return "ws://" + in.Addr + "/graphql" }

// Pid is the server's process id.
func (in *Instance) Pid() int { return in.cmd.Process.Pid }

// Kill ends the process with SIGKILL (no deferred code, no clean close) and waits for it.
func (in *Instance) Kill() {
	_ = in.cmd.Process.Signal(syscall.SIGKILL)
	<-in.exited
}

// Killed reports whether the process ended because of SIGKILL.
func (in *Instance) Killed() bool {
	<-in.exited
	var exit *exec.ExitError
	if !errors.As(in.waitErr, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// Stop ends the process gracefully (SIGTERM), and with SIGKILL if it has not exited within 15 s.
func (in *Instance) Stop() {
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.exited:
	case <-time.After(15 * time.Second):
		in.Kill()
	}
}

// Exited is closed when the process has ended.
func (in *Instance) Exited() <-chan struct{} { return in.exited }

// DataRace reports whether a race-detector build of the server has reported a data race.
func (in *Instance) DataRace() bool {
	raw, err := os.ReadFile(in.LogPath)
	return err == nil && strings.Contains(string(raw), "WARNING: DATA RACE")
}

// Log returns the instance's log so far (at most its last 64 KiB).
func (in *Instance) Log() string {
	raw, err := os.ReadFile(in.LogPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	if len(raw) > 64<<10 {
		raw = raw[len(raw)-64<<10:]
	}
	return string(raw)
}
