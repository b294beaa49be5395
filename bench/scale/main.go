// Command scale times the store's page reads on a dataset of 100,000 sessions and a million turns
// and messages (one session with 100,000 turns), built directly through the store.
//
//	go run ./bench/scale                 # SQLite in a temp dir, built fresh
//	go run ./bench/scale -db /tmp/s.db   # keep the file; a later run with -db reuses it
//	go run ./bench/scale -db postgres://...  # an empty PostgreSQL database or schema
//
// It calls the store readers the GraphQL resolvers call, with the arguments they pass (a page
// of 50 asks for 51 rows to know whether another follows), not the HTTP handler: the figures are
// the database's share of each query, without gqlgen's execution.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

func main() {
	dsn := flag.String("db", "", "SQLite file (reused if it holds the dataset) or postgres:// URL; empty: a temp file")
	iterations := flag.Int("n", 300, "timed calls per query")
	flag.Parse()
	if err := run(*dsn, *iterations, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(dsn string, iterations int, out io.Writer) error {
	ctx := context.Background()
	if dsn == "" {
		dir, err := os.MkdirTemp("", "forkgraph-scale-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dsn = filepath.Join(dir, "scale.db")
	}
	db, err := store.Open(ctx, store.Config{DSN: dsn, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := ensureDataset(ctx, db, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "driver %s, %d calls per query, page 50\n\n", db.Driver(), iterations)
	return report(ctx, db, iterations, out)
}

// ensureDataset builds the dataset unless the database already holds it.
func ensureDataset(ctx context.Context, db *store.DB, out io.Writer) error {
	n, err := db.CountSessions(ctx, workspace, forkengine.SessionFilter{IncludeDeleted: true})
	if err != nil {
		return err
	}
	if n == sessionCount {
		fmt.Fprintf(out, "reusing the dataset (%d sessions)\n", n)
		return nil
	}
	if n != 0 {
		return fmt.Errorf("workspace %q holds %d sessions, neither 0 nor the dataset", workspace, n)
	}
	start := time.Now()
	turns, messages, err := build(ctx, db)
	if err != nil {
		return err
	}
	if db.Driver() == store.DriverSQLite {
		if err := db.Checkpoint(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "built %d sessions, %d turns, %d messages in %s\n", sessionCount, turns, messages,
		time.Since(start).Round(time.Second))
	return nil
}
