package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "provider-adapter:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then shuts down within a few seconds. It prints
// "provider-adapter listening on http://ADDR/" on stdout once it accepts connections.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("provider-adapter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9100", "listen address; the adapter has no authentication, so keep it on loopback")
	statePath := fs.String("state", "provider-adapter.json", "file that keeps provider sessions and fork requests across restarts")
	forkDelay := fs.Duration("fork-delay", 0, "for tests: how long /fork waits, after recording the child, before it answers")
	forkgraphURL := fs.String("forkgraph-url", "", "forkgraph's GraphQL endpoint, asked before a /resume (verifyForkedSession); empty: /resume refuses")
	forkgraphToken := fs.String("forkgraph-token", os.Getenv("FORKGRAPH_TOKEN"), "bearer token for -forkgraph-url (default $FORKGRAPH_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *forkDelay < 0 {
		return fmt.Errorf("-fork-delay must not be negative, got %s", *forkDelay)
	}
	st, err := openState(*statePath)
	if err != nil {
		return err
	}
	a := &adapter{state: st, forkDelay: *forkDelay, now: time.Now, newID: randomID,
		log: log.New(stderr, "provider-adapter: ", log.LstdFlags)}
	if *forkgraphURL != "" {
		a.forkgraph = &forkgraphClient{url: *forkgraphURL, token: *forkgraphToken, http: &http.Client{Timeout: forkgraphTimeout}}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// Requests live in ctx, so a /fork held by -fork-delay stops waiting at shutdown and closes
	// without an answer; its child is recorded, and forkgraph's /reconcile finds it.
	srv := &http.Server{Handler: a.routes(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "provider-adapter listening on http://%s/\n", ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
