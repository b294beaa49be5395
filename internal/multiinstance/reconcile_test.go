package multiinstance

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// pressureLease is the -fork-lease of the pressure pass: the default, so its sweeps come every
// 5 s as in production and a lease is never lost to a stall of the loaded machine.
const pressureLease = forkengine.DefaultLeaseDuration

// pressureSlowBy is how long the slow source's /reconcile takes: longer than one checkpoint try
// (10 s), so an answer whose write shared the call's deadline would be lost, asked for again and
// lost again.
const pressureSlowBy = 11 * time.Second

// pressureSlack is what the pass allows beyond the bound for recording an answer while every
// core is busy. The failures it guards against are late by far more: an attempt queued behind a
// slow one by the slow call (11 s), an answer lost by a whole reconcile cycle.
const pressureSlack = 5 * time.Second

// pressureDuration is how long the clients fork under the spinner: three of the default lease's
// sweeps (5 s apart), so unknowns fall due in several sweeps and the slow source's answers (11 s
// each) queue behind one another, which is what the pass looks for, and about 110 unknowns in
// all. It was 30 s (about 220); the spinner takes every core for this long plus the settling,
// and in make test every other suite runs beside it.
const pressureDuration = 15 * time.Second

// TestUnknownsReconcileWithinTheBoundUnderCPUPressure: two instances on PostgreSQL, a CPU
// spinner as wide as the machine beside them, busy clients forking all along, and clients whose
// forks the provider answers unknown, one of them with a /reconcile that takes 11 s. Every
// unknown delivery must be resolved within the documented bound (a third of the lease after it
// falls due, plus the provider's answer time), each with exactly one /reconcile call (an answer
// obtained is recorded, never asked for again) and one /fork call.
func TestUnknownsReconcileWithinTheBoundUnderCPUPressure(t *testing.T) {
	// Not parallel: its spinner takes every core, and its bound is measured against that load
	// alone. Go runs it before the package's parallel tests, which then overlap one another.
	c := newPostgresCluster(t)
	c.adapter.EnableReconcile()
	flags := []string{"-fork-lease", pressureLease.String(), "-barrier=false"}
	a, b := c.startWith("a", flags...), c.startWith("b", flags...)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	load := ReconcileLoad{Instances: []*Instance{a, b}, Adapter: c.adapter, Workspace: workspace,
		Busy: 4, Unknown: 3, Slow: 1, SlowBy: pressureSlowBy, Every: 400 * time.Millisecond, Duration: pressureDuration}
	if err := load.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	stopSpinner, err := StartSpinner()
	if err != nil {
		t.Fatal(err)
	}
	defer stopSpinner()
	res, err := load.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	awaitSettled(t, ctx, client(a), res.Unknown, pressureLease+pressureSlowBy+time.Minute)
	stopSpinner()
	// An ordinary fork may end unknown too (its answer lost on the loaded machine): every unknown
	// in the log is held to the bound, not only those the adapter made.
	resolutions := awaitResolutions(t, ctx, c.db, time.Minute)
	for _, id := range res.Unknown {
		if _, ok := resolutions[id]; !ok {
			t.Errorf("operation %s was answered unknown, and the log never shows it unknown", id)
		}
	}
	if extra := len(resolutions) - len(res.Unknown); extra > 0 {
		t.Logf("%d ordinary forks ended unknown as well:", extra)
		for id := range resolutions {
			if !slices.Contains(res.Unknown, id) {
				op, _, err := client(a).Operation(ctx, workspace, id)
				t.Logf("  %s: %+v (%v); error %q", id, op, err, deref(op.Error))
			}
		}
	}
	answered := map[string]time.Duration{}
	calls := map[string]int{}
	for _, call := range c.adapter.ReconcileCalls() {
		answered[call.OperationID] = call.Took
		calls[call.OperationID]++
	}
	bound := ReconcileBound{Lease: pressureLease, Slack: pressureSlack, Answered: answered}
	late, worst := bound.Late(resolutions)
	t.Logf("%d ordinary forks committed; %d unknown (%d with a slow /reconcile); %s; worst against the bound %s",
		res.Committed, len(res.Unknown), len(res.Slow), SpreadOf(resolutions), worst.Round(time.Millisecond))
	for _, l := range late {
		t.Errorf("resolved after the bound: %s", l)
	}
	for id := range resolutions {
		if calls[id] != 1 {
			t.Errorf("operation %s: %d /reconcile calls, want exactly one (an answer obtained is recorded)", id, calls[id])
		}
		if n := len(c.adapter.ForkCallsOf(id)); n != 1 {
			t.Errorf("operation %s: %d /fork calls, want one", id, n)
		}
	}
}

// awaitSettled waits until every operation of ids is COMMITTED or FAILED, at most limit in all.
func awaitSettled(t *testing.T, ctx context.Context, api *Client, ids []string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for _, id := range ids {
		op, err := api.AwaitOperation(ctx, workspace, id, time.Until(deadline), func(o Operation) bool {
			return o.Status == "COMMITTED" || o.Status == "FAILED"
		})
		if err != nil {
			t.Fatalf("unknown delivery %s never settled: %v", id, err)
		}
		if op.Status != "COMMITTED" {
			t.Errorf("operation %s ended %+v, want COMMITTED (the adapter made every child)", id, op)
		}
	}
}

// awaitResolutions reads the log until every operation that became unknown has been settled, at
// most for limit, and returns what it read last.
func awaitResolutions(t *testing.T, ctx context.Context, dsn string, limit time.Duration) map[string]Resolution {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		rs, err := ReadResolutions(ctx, dsn, workspace)
		if err != nil {
			t.Fatal(err)
		}
		settled := true
		for _, r := range rs {
			settled = settled && r.Resolved()
		}
		if settled || time.Now().After(deadline) {
			return rs
		}
		time.Sleep(500 * time.Millisecond) // polling the database, bounded by the deadline
	}
}
