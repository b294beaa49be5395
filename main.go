// Command forkgraph serves the forkgraph GraphQL API: agent sessions, their turns and fork lineage,
// and durable fork operations streamed over websockets. `go run .` starts it on
// http://127.0.0.1:8080 with a SQLite file and a seeded demo workspace; see README.md.
//
// The wiring (config, store, engine, handler, routes, shutdown) is internal/server's Run, which
// tests start through internal/servertest; this command gives it the process: arguments,
// environment, output, the build's stamps and the signals that stop it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/forkgraph/forkgraph/internal/server"
)

// version and commit are the release and the commit this binary reports; a release build sets
// them with -ldflags "-X main.version=v1.2.3 -X main.commit=<sha>" (`make build` does). Empty:
// what the build recorded (module version, VCS stamp), see telemetry.ReadBuild.
var version, commit string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "forkgraph:", err)
		if server.IsUsage(err) {
			fmt.Fprintln(os.Stderr, "Run 'forkgraph -h' for the list of flags.")
			os.Exit(2) // the flag package's status for a command line it refuses
		}
		os.Exit(1)
	}
}

// run serves until ctx ends (server.Run), with the process's environment, output and build stamps.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return server.Run(ctx, args, server.Options{Getenv: getenv, Stdout: stdout, Stderr: stderr, Version: version, Commit: commit})
}
