// Command crashharness proves that fork operations survive a hard crash. In -mode=park it seeds a
// source session on a SQLite file and parks one fork operation in each in-flight phase (prepared,
// dispatching, provider_accepted), prints a manifest and READY, and waits to be killed. In
// -mode=recover it opens the same file, runs start-up recovery and prints a JSON report.
//
// Every Fork call the driver receives is appended to a calls file with fsync before the call goes
// on, so "the provider was called at most once per operation" is counted on disk across
// processes, not in the memory of a process that is about to be killed.
//
// crash_test.go builds this program, kills it with SIGKILL and checks the database afterwards.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// The harness's fixed ids: one workspace, one source session.
const (
	workspaceID = "crash"
	sourceID    = "source"
)

// Manifest is what park prints (as one JSON line, before READY): which operation sits in which
// phase.
type Manifest struct {
	Prepared         string `json:"prepared"`
	Dispatching      string `json:"dispatching"`
	ProviderAccepted string `json:"providerAccepted"`
}

// Report is what recover prints as JSON.
type Report struct {
	Scanned   int               `json:"scanned"`
	Unknown   int               `json:"unknown"`
	Committed int               `json:"committed"`
	Failed    int               `json:"failed"`
	Errors    []string          `json:"errors"`
	Statuses  map[string]string `json:"statuses"` // operation id → internal status after recovery
}

func main() {
	mode := flag.String("mode", "", "park or recover")
	db := flag.String("db", "", "SQLite database file")
	calls := flag.String("calls", "", "file that records every driver Fork call")
	lifetime := flag.Duration("park-lifetime", 5*time.Minute,
		"park exits on its own after this long, so a harness whose test died does not linger")
	flag.Parse()
	if err := run(*mode, *db, *calls, *lifetime, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crashharness:", err)
		os.Exit(1)
	}
}

func run(mode, db, calls string, lifetime time.Duration, out io.Writer) error {
	if db == "" || calls == "" {
		return errors.New("-db and -calls are required")
	}
	ctx := context.Background()
	switch mode {
	case "park":
		return park(ctx, db, calls, lifetime, out)
	case "recover":
		report, err := recoverAll(ctx, db, calls)
		if err != nil {
			return err
		}
		return json.NewEncoder(out).Encode(report)
	}
	return fmt.Errorf("unknown -mode %q (want park or recover)", mode)
}
