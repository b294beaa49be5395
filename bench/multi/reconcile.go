package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// reconcileOptions are the flags of -mode reconcile.
type reconcileOptions struct {
	repo, db        string
	instances, busy int
	unknown, slow   int
	slowBy, every   time.Duration
	duration, lease time.Duration
	spin            bool
	settle, slack   time.Duration
}

// benchReconcile measures how long after falling due unknown deliveries are resolved, under
// load (multiinstance.ReconcileLoad: busy clients forking all along, clients whose forks the
// adapter answers unknown, some with a slow /reconcile) and optionally a CPU spinner, on
// PostgreSQL with -instances instances or on a SQLite file with one. It prints the distribution
// and every operation resolved past the documented bound, and fails if there is one.
func benchReconcile(o reconcileOptions) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "bench-reconcile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := multiinstance.Build(ctx, o.repo, dir, false)
	if err != nil {
		return err
	}
	dsn := filepath.Join(dir, "forkgraph.db")
	if strings.HasPrefix(o.db, "postgres") {
		var drop func() error
		if dsn, drop, err = multiinstance.NewSchema(ctx, o.db); err != nil {
			return err
		}
		defer drop()
	} else {
		o.instances = 1 // one process per SQLite file
	}
	adapter := multiinstance.NewAdapter()
	defer adapter.Close()
	adapter.EnableReconcile()
	var ins []*multiinstance.Instance
	defer func() {
		for _, in := range ins {
			in.Stop()
		}
	}()
	for i := range o.instances {
		name := fmt.Sprintf("bench-%c", 'a'+i)
		in, err := multiinstance.Start(ctx, multiinstance.Options{Name: name, Binary: bin, DB: dsn, InstanceID: name,
			ForkLease: o.lease, WebhookURL: adapter.URL(name), LogDir: dir,
			Extra: []string{"-barrier=false", "-webhook-timeout", "60s"}})
		if err != nil {
			return err
		}
		ins = append(ins, in)
	}
	load := multiinstance.ReconcileLoad{Instances: ins, Adapter: adapter, Workspace: benchWorkspace, Busy: o.busy,
		Unknown: o.unknown, Slow: o.slow, SlowBy: o.slowBy, Every: o.every, Duration: o.duration}
	if err := load.Prepare(ctx); err != nil {
		return err
	}
	if o.spin {
		stop, err := multiinstance.StartSpinner()
		if err != nil {
			return err
		}
		defer stop()
	}
	fmt.Printf("machine: %d CPUs, load average %s; %d instance(s) on %s, lease %s, spinner %v\n",
		runtime.NumCPU(), loadAverage(), o.instances, strings.SplitN(o.db+":", ":", 2)[0], o.lease, o.spin)
	res, err := load.Run(ctx)
	if err != nil {
		return err
	}
	resolutions, err := settle(ctx, dsn, o.settle)
	if err != nil {
		return err
	}
	fmt.Printf("load average at the end %s; %d ordinary forks committed, %d answered unknown (%d with a %s /reconcile)\n",
		loadAverage(), res.Committed, len(res.Unknown), len(res.Slow), o.slowBy)
	return reportReconcile(adapter, resolutions, o.lease, o.slack, res.Slow)
}

// settle reads the log until every unknown delivery has been settled, at most for limit.
func settle(ctx context.Context, dsn string, limit time.Duration) (map[string]multiinstance.Resolution, error) {
	deadline := time.Now().Add(limit)
	for {
		rs, err := multiinstance.ReadResolutions(ctx, dsn, benchWorkspace)
		if err != nil {
			return nil, err
		}
		open := 0
		for _, r := range rs {
			if !r.Resolved() {
				open++
			}
		}
		if open == 0 || time.Now().After(deadline) {
			return rs, nil
		}
		time.Sleep(500 * time.Millisecond) // polling the database, bounded by the deadline
	}
}

// reportReconcile prints, for the ordinary and the slow unknown deliveries apart, how long after
// falling due they were resolved; when the provider was asked (the attempt) and how long the
// answer took to record; the worst against the bound; and the /reconcile calls made. It fails when
// one is resolved past the bound plus slack, or asked more than once.
func reportReconcile(adapter *multiinstance.Adapter, rs map[string]multiinstance.Resolution, lease, slack time.Duration, slow []string) error {
	answered, calls, asked := map[string]time.Duration{}, map[string]int{}, map[string]time.Time{}
	for _, c := range adapter.ReconcileCalls() {
		answered[c.OperationID], calls[c.OperationID] = c.Took, calls[c.OperationID]+1
		asked[c.OperationID] = c.At
	}
	isSlow := map[string]bool{}
	for _, id := range slow {
		isSlow[id] = true
	}
	bound := multiinstance.ReconcileBound{Lease: lease, Answered: answered}
	var quick, slowDue, attempt, record []time.Duration
	var late []string
	worst, repeated := -time.Hour, 0
	for id, r := range rs {
		if calls[id] > 1 {
			repeated++
			late = append(late, fmt.Sprintf("%s: asked %d times", id, calls[id]))
		}
		if !r.Resolved() {
			late = append(late, fmt.Sprintf("%s: never resolved", id))
			continue
		}
		if isSlow[id] {
			slowDue = append(slowDue, r.ResolvedAt.Sub(r.DueAt))
		} else {
			quick = append(quick, r.ResolvedAt.Sub(r.DueAt))
		}
		if at, ok := asked[id]; ok {
			attempt = append(attempt, at.Sub(r.DueAt))
			record = append(record, r.ResolvedAt.Sub(at.Add(answered[id])))
		}
		over := r.ResolvedAt.Sub(bound.Deadline(r))
		worst = max(worst, over)
		if over > slack {
			late = append(late, fmt.Sprintf("%s: %s past the bound", id, over.Round(time.Millisecond)))
		}
	}
	fmt.Printf("resolved after falling due, quick /reconcile: %s\n", summary(quick))
	fmt.Printf("resolved after falling due, slow /reconcile:  %s\n", summary(slowDue))
	fmt.Printf("provider asked after falling due:             %s\n", summary(attempt))
	fmt.Printf("answer recorded after it arrived:             %s\n", summary(record))
	fmt.Printf("bound: a third of the lease (%s) after falling due, plus the provider's answer time; worst against it %s (allowed %s); %d of %d past it or never resolved; %d asked more than once\n",
		lease/3, worst.Round(time.Millisecond), slack, len(late)-repeated, len(rs), repeated)
	sort.Strings(late)
	for _, l := range late {
		fmt.Println("  late:", l)
	}
	if len(late) > 0 {
		return errors.New("unknown deliveries resolved past the bound, or asked for twice")
	}
	return nil
}
