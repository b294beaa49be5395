package main

import (
	"context"
	"fmt"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/store"
)

// recoverAll reopens the database a killed process left behind, runs start-up recovery with a
// recording driver, waits for background work, and reports what every operation became.
func recoverAll(ctx context.Context, o options) (Report, error) {
	dbPath, callsPath := o.db, o.calls
	db, err := store.Open(ctx, store.Config{DSN: dbPath})
	if err != nil {
		return Report{}, fmt.Errorf("open store: %w", err)
	}
	defer db.Close()
	driver, err := newRecordingDriver(simulated.New(simulated.Options{}), "recover", callsPath)
	if err != nil {
		return Report{}, err
	}
	engine, err := forkengine.New(forkengine.Config{
		Store: db, Drivers: map[string]forkengine.Driver{"simulated": driver},
		InstanceID: o.instance, LeaseDuration: o.lease,
		ExclusiveStore: db.Driver() == store.DriverSQLite, // as the server: a SQLite file has one process
		Clock:          func() time.Time { return time.Now().Add(o.clockOffset).UTC().Truncate(time.Microsecond) },
	})
	if err != nil {
		return Report{}, fmt.Errorf("build engine: %w", err)
	}
	rec, err := engine.Recover(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("recover: %w", err)
	}
	closeCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := engine.Close(closeCtx); err != nil {
		return Report{}, err
	}
	report := Report{Scanned: rec.Scanned, Unknown: rec.Unknown, Committed: rec.Committed,
		Failed: rec.Failed, Reconciled: rec.Reconciled, Errors: []string{}, Statuses: map[string]string{}}
	for _, e := range rec.Errors {
		report.Errors = append(report.Errors, e.Error())
	}
	ops, err := db.OperationsBySourceIDs(ctx, workspaceID, []string{sourceID})
	if err != nil {
		return report, fmt.Errorf("read operations: %w", err)
	}
	for _, op := range ops {
		report.Statuses[op.ID] = string(op.Status)
	}
	return report, nil
}
