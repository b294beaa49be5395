package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is the forkgraph subprocess under measurement.
type server struct {
	cmd   *exec.Cmd
	dir   string
	base  string
	wsURL string
	debug string // the server's -debug-addr (net/http/pprof, loopback)
}

// buildServer builds the module at repo into a fresh directory, which the caller removes.
func buildServer(ctx context.Context, repo string) (bin, dir string, err error) {
	dir, err = os.MkdirTemp("", "fanout-")
	if err != nil {
		return "", "", fmt.Errorf("temp dir: %w", err)
	}
	bin = filepath.Join(dir, "forkgraph")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Dir, build.Stdout, build.Stderr = repo, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", dir, fmt.Errorf("build server: %w", err)
	}
	return bin, dir, nil
}

// startServer starts bin on a free loopback port with the simulated driver at zero latency and
// no demo seed. db is a postgres:// URL shared with other instances (id names this one), or ""
// for a fresh SQLite file in dir.
func startServer(ctx context.Context, bin, dir, db, id, gogc string) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	debugAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "server-"+id+".log"))
	if err != nil {
		return nil, fmt.Errorf("server log: %w", err)
	}
	args := []string{"-addr", addr, "-sim-latency", "0s", "-no-seed", "-debug-addr", debugAddr}
	if db == "" {
		args = append(args, "-db", filepath.Join(dir, "db"))
	} else {
		args = append(args, "-db", db, "-instance-id", id)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if gogc != "" {
		cmd.Env = append(os.Environ(), "GOGC="+gogc)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	s := &server{cmd: cmd, dir: dir, base: "http://" + addr, wsURL: "ws://" + addr + "/graphql", debug: "http://" + debugAddr}
	if err := s.awaitHealthy(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (s *server) awaitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		resp, err := http.Get(s.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond) // an external process: poll with a deadline
	}
	return fmt.Errorf("server at %s not healthy within 30s (logs in %s)", s.base, s.dir)
}

// rss returns the server's resident set size in bytes, from /proc.
func (s *server) rss() (int64, error) { return rssOfPid(s.cmd.Process.Pid) }

// rssOfPid returns the resident set size of process pid in bytes, from /proc.
func rssOfPid(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read server status: %w", err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if fields := strings.Fields(scanner.Text()); len(fields) >= 2 && fields[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

// liveMemory returns the server's heap in use plus goroutine stacks right after a forced garbage
// collection, from its runtime statistics: what the connections hold, without the headroom the
// collector leaves (GOGC), which RSS includes.
func (s *server) liveMemory() (int64, error) {
	resp, err := http.Get(s.debug + "/debug/pprof/heap?debug=1&gc=1")
	if err != nil {
		return 0, fmt.Errorf("read server memory statistics: %w", err)
	}
	defer resp.Body.Close()
	var heap, stacks int64
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 64<<10), 1<<20)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) >= 4 && fields[0] == "#" && fields[2] == "=" {
			switch fields[1] {
			case "HeapInuse":
				heap, _ = strconv.ParseInt(fields[3], 10, 64)
			case "Stack":
				stacks, _ = strconv.ParseInt(fields[3], 10, 64)
			}
		}
	}
	if heap == 0 || stacks == 0 {
		return 0, fmt.Errorf("no HeapInuse or Stack in the server's memory statistics (%v)", scanner.Err())
	}
	return heap + stacks, nil
}

// stop ends the server gracefully (SIGTERM), then forcibly. Its directory is the caller's.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// cpuSeconds returns the user + system CPU time of process pid so far, from /proc.
func cpuSeconds(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	// Fields after the command name (which may hold spaces) start after the last ')'.
	fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}
