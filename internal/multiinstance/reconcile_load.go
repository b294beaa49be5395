package multiinstance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ReconcileLoad is a workload that makes fork deliveries end unknown while ordinary forks keep
// the instances busy. Busy clients each fork a source of their own through its first turn again
// and again (the instances run with -barrier=false, so a committed fork does not block the next)
// and wait for each to settle; Unknown clients each fork a source whose /fork the adapter answers
// unknown, through its next turn every Every, and Slow of them have a /reconcile that takes SlowBy.
// Clients are spread round-robin over the instances.
type ReconcileLoad struct {
	Instances []*Instance
	Adapter   *Adapter
	Workspace string
	Busy      int
	Unknown   int
	Slow      int
	SlowBy    time.Duration
	Every     time.Duration
	Duration  time.Duration
}

// ReconcileTurns is how many turns each source of a ReconcileLoad gets: an unknown client forks
// through a new one each time, so its duration must not need more.
const ReconcileTurns = 120

// LoadResult is what a ReconcileLoad started.
type LoadResult struct {
	Committed int      // ordinary forks that committed
	Unknown   []string // operations the adapter answered unknown
	Slow      []string // those of them whose /reconcile is slow
}

// Prepare reports the sources and tells the adapter how to answer them.
func (l ReconcileLoad) Prepare(ctx context.Context) error {
	api := NewClient(l.Instances[0].GraphQLURL())
	for i := range l.Busy {
		if err := api.ReportSource(ctx, l.Workspace, fmt.Sprintf("busy-%d", i), "webhook", "", 1); err != nil {
			return err
		}
	}
	for i := range l.Unknown {
		src := fmt.Sprintf("unknown-%d", i)
		l.Adapter.AnswerUnknown(src)
		if i < l.Slow {
			l.Adapter.SlowReconcile(src, l.SlowBy)
		}
		if err := api.ReportSource(ctx, l.Workspace, src, "webhook", "", ReconcileTurns); err != nil {
			return err
		}
	}
	return nil
}

// Run runs the load for Duration and returns what it started. A client's failed request ends
// the run with its error.
func (l ReconcileLoad) Run(ctx context.Context) (LoadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, l.Duration)
	defer cancel()
	var (
		mu   sync.Mutex
		res  LoadResult
		errs []error
		wg   sync.WaitGroup
	)
	fail := func(err error) {
		if ctx.Err() == nil { // a request cut off at the end of the run is not a failure
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
	}
	for i := range l.Busy {
		api := NewClient(l.Instances[i%len(l.Instances)].GraphQLURL())
		wg.Go(func() {
			src := fmt.Sprintf("busy-%d", i)
			for n := 0; ctx.Err() == nil; n++ {
				op, err := api.Fork(ctx, l.Workspace, src, src+"-t1", fmt.Sprintf("%s-%d", src, n))
				if err == nil {
					op, err = api.AwaitOperation(ctx, l.Workspace, op.ID, l.Duration, Operation.Terminal)
				}
				if err != nil {
					fail(fmt.Errorf("busy fork of %s: %w", src, err))
					return
				}
				mu.Lock()
				if op.Status == "COMMITTED" {
					res.Committed++
				}
				mu.Unlock()
			}
		})
	}
	for i := range l.Unknown {
		api := NewClient(l.Instances[(l.Busy+i)%len(l.Instances)].GraphQLURL())
		wg.Go(func() {
			src := fmt.Sprintf("unknown-%d", i)
			tick := time.NewTicker(l.Every)
			defer tick.Stop()
			for turn := 1; turn <= ReconcileTurns && ctx.Err() == nil; turn++ {
				op, err := api.Fork(ctx, l.Workspace, src, fmt.Sprintf("%s-t%d", src, turn), fmt.Sprintf("%s-%d", src, turn))
				if err != nil {
					fail(fmt.Errorf("fork of %s: %w", src, err))
					return
				}
				mu.Lock()
				res.Unknown = append(res.Unknown, op.ID)
				if i < l.Slow {
					res.Slow = append(res.Slow, op.ID)
				}
				mu.Unlock()
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
		})
	}
	wg.Wait()
	return res, errors.Join(errs...)
}

// spinEnv, set in a child's environment, makes SpinIfAsked spin instead of returning.
const spinEnv = "FORKGRAPH_MULTIINSTANCE_SPIN"

// SpinIfAsked turns this process into a CPU spinner, GOMAXPROCS goroutines of busy loop that
// never return, when StartSpinner started it; otherwise it returns at once. TestMain and the
// benchmarks call it first.
func SpinIfAsked() {
	if os.Getenv(spinEnv) != "1" {
		return
	}
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for { // the busy loop is the point: preempted, never yielding
			}
		}()
	}
	select {}
}

// StartSpinner runs this program again as a CPU spinner (SpinIfAsked) beside the instances, as
// the noisy neighbour of a loaded machine: it keeps every core busy until stop, or until this
// process dies (the kernel kills it then).
func StartSpinner() (stop func(), err error) {
	cmd := exec.Command(os.Args[0]) // SpinIfAsked runs before any flag is read
	cmd.Env = append(os.Environ(), spinEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the CPU spinner: %w", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}, nil
}
