package transports

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/await"
)

// However many operations one event wakes, at most max run at once: the rest wait their turn
// instead of each holding a goroutine and its stack.
func TestRunnersBoundTheGoroutinesOfABurst(t *testing.T) {
	var running, peak atomic.Int32
	var done sync.WaitGroup
	var order []int
	var mu sync.Mutex
	runs := make([]*streamRun, 200)
	index := map[*streamRun]int{}
	for i := range runs {
		runs[i] = &streamRun{}
		index[runs[i]] = i
	}
	p := &runners{max: 2, run: func(r *streamRun, _ *runner) {
		n := running.Add(1)
		for old := peak.Load(); n > old && !peak.CompareAndSwap(old, n); old = peak.Load() {
		}
		mu.Lock()
		order = append(order, index[r])
		mu.Unlock()
		time.Sleep(100 * time.Microsecond) // long enough for unbounded runs to overlap
		running.Add(-1)
		done.Done()
	}}
	done.Add(len(runs))
	for i := range runs {
		p.start(runs[i])
	}
	done.Wait()
	if got := peak.Load(); got > 2 {
		t.Fatalf("%d runs at once, want at most 2", got)
	}
	if len(order) != len(runs) {
		t.Fatalf("%d of %d woken operations ran", len(order), len(runs))
	}
	idle := func() bool { // the runners end once nothing waits
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.running == 0 && p.head == len(p.queue)
	}
	await.Until(t, 5*time.Second, "the runners to end after the burst", idle)
}

// A runner stuck (say, in a write to a client that does not read) does not hold up the others:
// when the queue has not moved for runnerStall, one more runner starts.
func TestRunnersOutgrowAStuckRunner(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	ran := make(chan struct{}, 1)
	var blocker, other streamRun
	p := &runners{max: 1, run: func(r *streamRun, _ *runner) {
		if r == &blocker {
			<-stuck
			return
		}
		ran <- struct{}{}
	}}
	p.start(&blocker)
	p.start(&other)
	select {
	case <-ran:
	case <-time.After(50 * runnerStall):
		t.Fatal("a woken operation waited behind a stuck runner")
	}
}

// A runner stuck in a write (its connection's client does not read) stops counting towards max
// once it has been so for runnerStall: the stall check starts as many runners as it takes to
// have max that can run, not one per stall, so N slow clients do not cost the others N stalls.
func TestRunnersDoNotCountRunnersStuckInAWrite(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan *streamRun, 10)
	p := &runners{max: 2, run: func(r *streamRun, _ *runner) {
		started <- r
		<-release
	}}
	stuck := time.Now().Add(-2 * runnerStall).UnixNano()
	p.mu.Lock()
	p.live = map[*runner]struct{}{}
	for range 2 { // two runners writing to clients that stopped reading
		w := &runner{}
		w.writingSince.Store(stuck)
		p.live[w] = struct{}{}
	}
	p.running = 2
	waiting := []*streamRun{{}, {}, {}}
	p.queue = append(p.queue, waiting...)
	p.progress = 1
	p.mu.Unlock()

	p.checkStall(1) // no run finished: the progress rule alone would start one
	p.mu.Lock()
	running, left := p.running, len(p.queue)-p.head
	p.mu.Unlock()
	if running != 5 || left != 0 {
		t.Fatalf("after the stall check: %d runners and %d runs waiting, want 5 and 0 "+
			"(2 stuck, 2 to make up max, 1 for the stalled queue)", running, left)
	}
	for range waiting {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("a run the stall check started did not run")
		}
	}
}
