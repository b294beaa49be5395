package multiinstance

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// PostgresServer is a PostgreSQL cluster of a test's own, made by scripts/start-postgres.sh, which
// the test can stop and start again under running servers, as an outage would: the suite's shared
// cluster stays up for the tests running beside it.
type PostgresServer struct {
	Dir    string // the cluster's directory (FORKGRAPH_PG_DIR)
	DSN    string // its postgres:// URL (FORKGRAPH_TEST_POSTGRES_DSN)
	script string
}

// StartPostgresServer starts a new cluster with the script of the repository at repoRoot.
func StartPostgresServer(ctx context.Context, repoRoot string) (*PostgresServer, error) {
	p := &PostgresServer{script: filepath.Join(repoRoot, "scripts", "start-postgres.sh")}
	out, err := p.run(ctx)
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(out, "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		value = strings.Trim(value, "'")
		switch {
		case !ok:
		case name == "FORKGRAPH_PG_DIR":
			p.Dir = value
		case name == PostgresDSNEnv:
			p.DSN = value
		}
	}
	if p.Dir == "" || p.DSN == "" {
		return nil, fmt.Errorf("start-postgres.sh printed no cluster: %q", out)
	}
	return p, nil
}

// Pause stops the server (fast shutdown: every connection is ended), keeping its data.
func (p *PostgresServer) Pause(ctx context.Context) error {
	_, err := p.run(ctx, "pause", p.Dir)
	return err
}

// Resume starts the server again on its port and waits until it accepts connections.
func (p *PostgresServer) Resume(ctx context.Context) error {
	_, err := p.run(ctx, "resume", p.Dir)
	return err
}

// Remove stops the server, if it runs, and deletes the cluster.
func (p *PostgresServer) Remove(ctx context.Context) error {
	_, err := p.run(ctx, "stop", p.Dir)
	return err
}

func (p *PostgresServer) run(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{p.script}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("start-postgres.sh %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
