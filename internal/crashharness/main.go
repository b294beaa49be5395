// Command crashharness proves that fork operations survive a hard crash. In -mode=park it seeds a
// source session of a few MB of transcript on a SQLite file (or a PostgreSQL database) and a
// committed fork of it, parks one fork operation in each in-flight phase (prepared, dispatching,
// provider_accepted, the last a fork of the fork), prints a manifest and READY, and waits to be
// killed. In
// -mode=recover it opens the same database, runs start-up recovery as the instance -instance-id
// and prints a JSON report. On PostgreSQL another instance's leases are live until they expire;
// -clock-offset moves the recovering engine's clock past them without waiting.
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
// phase, and the committed child fork's operation with the ids park read its transcript under
// (its inherited turns and messages are presented ids, which must not change across processes).
type Manifest struct {
	Prepared         string   `json:"prepared"`
	Dispatching      string   `json:"dispatching"`
	ProviderAccepted string   `json:"providerAccepted"`
	Child            string   `json:"child"`
	ChildTurnIDs     []string `json:"childTurnIds"`
	ChildMessageIDs  []string `json:"childMessageIds"`
}

// Report is what recover prints as JSON.
type Report struct {
	Scanned   int `json:"scanned"`
	Unknown   int `json:"unknown"`
	Committed int `json:"committed"`
	Failed    int `json:"failed"`
	// Reconciled counts the reconcile attempts made on unknown deliveries that were due.
	Reconciled int               `json:"reconciled"`
	Errors     []string          `json:"errors"`
	Statuses   map[string]string `json:"statuses"` // operation id → internal status after recovery
}

// options are the harness's flags.
type options struct {
	mode, db, calls string
	lifetime        time.Duration
	instance        string        // the engine's lease owner
	lease           time.Duration // the engine's lease duration
	clockOffset     time.Duration // recover: run the engine's clock this far ahead, past leases
}

func main() {
	var o options
	flag.StringVar(&o.mode, "mode", "", "park or recover")
	flag.StringVar(&o.db, "db", "", "SQLite database file or postgres:// URL")
	flag.StringVar(&o.calls, "calls", "", "file that records every driver Fork call")
	flag.DurationVar(&o.lifetime, "park-lifetime", 5*time.Minute,
		"park exits on its own after this long, so a harness whose test died does not linger")
	flag.StringVar(&o.instance, "instance-id", "", "lease owner of this process (default: park or recover)")
	flag.DurationVar(&o.lease, "lease", 30*time.Second, "fork lease duration")
	flag.DurationVar(&o.clockOffset, "clock-offset", 0, "recover: how far ahead of real time the engine's clock runs")
	flag.Parse()
	if o.instance == "" {
		o.instance = o.mode
	}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crashharness:", err)
		os.Exit(1)
	}
}

func run(o options, out io.Writer) error {
	if o.db == "" || o.calls == "" {
		return errors.New("-db and -calls are required")
	}
	ctx := context.Background()
	switch o.mode {
	case "park":
		return park(ctx, o, out)
	case "recover":
		report, err := recoverAll(ctx, o)
		if err != nil {
			return err
		}
		return json.NewEncoder(out).Encode(report)
	}
	return fmt.Errorf("unknown -mode %q (want park or recover)", o.mode)
}
