package transports

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// runnerStall is how long the queue of woken operations may wait while every runner is busy
// (each could be stuck in a write to a client that does not read) before one more starts.
const runnerStall = 20 * time.Millisecond

// wakeRunners continues the operations their streams wake. One event wakes every subscriber
// of a workspace at once, inside the publisher's loop: a goroutine per wake-up meant ten
// thousand goroutines, each with its stack, alive at the same moment, for two cores to run.
// A few runners take the woken operations in turn instead; the memory of a burst is theirs,
// not ten thousand stacks.
var wakeRunners = &runners{max: 4 * runtime.GOMAXPROCS(0)}

// runners runs woken operations, in the order they woke, on at most max goroutines, plus one
// for each runner that has been stuck in a write for runnerStall, plus one whenever the queue has
// not moved for runnerStall: a runner writes to its client when it parks, and a client that
// stopped reading may hold that write until its connection is closed as too slow.
type runners struct {
	max int
	run func(*streamRun, *runner) // continues one woken operation on a runner (nil: its connection's stream; tests replace it)

	mu       sync.Mutex
	queue    []*streamRun
	head     int // queue[head:] waits
	running  int
	live     map[*runner]struct{} // the running runners, for the stall check
	progress uint64               // runs finished; unchanged over runnerStall means every runner is stuck
	watching bool                 // a stall check is armed
}

// runner is one goroutine of runners.
type runner struct {
	// writingSince is when the write the runner is in began (Unix nanoseconds; 0: none). A write
	// to a client that does not read lasts until its connection is closed as too slow; the
	// stall check stops counting such a runner, so each slow connection costs others nothing
	// after runnerStall, however many there are.
	writingSince atomic.Int64
}

// flush writes c's queue on behalf of w (nil: not a runner), marking w as writing meanwhile.
func (w *runner) flush(c *conn) {
	if w == nil {
		c.flush()
		return
	}
	w.writingSince.Store(time.Now().UnixNano())
	defer w.writingSince.Store(0)
	c.flush()
}

// start continues run on a runner.
func (p *runners) start(run *streamRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running < p.max {
		p.spawnLocked(run)
		return
	}
	p.queue = append(p.queue, run)
	p.watchLocked()
}

// spawnLocked starts a runner with run.
func (p *runners) spawnLocked(run *streamRun) {
	w := &runner{}
	if p.live == nil {
		p.live = map[*runner]struct{}{}
	}
	p.live[w] = struct{}{}
	p.running++
	go p.loop(w, run)
}

// yieldEvery is how many runs a runner does before it yields its thread. A burst keeps a
// runner busy far longer than the scheduler's 10 ms time slice, and the runtime then stops it
// with an asynchronous preemption (a signal, and every register saved and restored: 7 % of a
// 10,000-subscriber fan-out's CPU by profile); a run is some tens of microseconds, so yielding
// every yieldEvery runs gives the thread up before the slice ends, for the price of a Gosched.
const yieldEvery = 64

// loop runs run on w, then whatever waits, and ends when nothing does.
func (p *runners) loop(w *runner, run *streamRun) {
	for n := 1; run != nil; n++ {
		if p.run != nil {
			p.run(run, w)
		} else {
			run.c.stream(run, w)
		}
		if n%yieldEvery == 0 {
			runtime.Gosched()
		}
		run = p.next(w)
	}
}

// next counts a finished run and takes the next waiting one (nil: runner w ends).
func (p *runners) next(w *runner) *streamRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.progress++
	if p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
		if cap(p.queue) > 1024 {
			p.queue = nil // a burst's queue is not kept
		}
		p.running--
		delete(p.live, w)
		return nil
	}
	return p.takeLocked()
}

// watchLocked arms the stall check, unless it is armed.
func (p *runners) watchLocked() {
	if p.watching {
		return
	}
	p.watching = true
	seen := p.progress
	time.AfterFunc(runnerStall, func() { p.checkStall(seen) })
}

// checkStall starts runners while operations wait: one for each runner stuck in a write since
// runnerStall ago, and one more when no run has finished since seen.
func (p *runners) checkStall(seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watching = false
	if p.head == len(p.queue) {
		return
	}
	stuck := p.stuckWritingLocked(time.Now())
	for p.head < len(p.queue) && p.running-stuck < p.max {
		p.spawnLocked(p.takeLocked())
	}
	if p.head < len(p.queue) && p.progress == seen {
		p.spawnLocked(p.takeLocked())
	}
	p.watchLocked()
}

// stuckWritingLocked counts the runners in a write that began runnerStall or more before now.
func (p *runners) stuckWritingLocked(now time.Time) int {
	stuck := 0
	for w := range p.live {
		if since := w.writingSince.Load(); since != 0 && now.UnixNano()-since >= int64(runnerStall) {
			stuck++
		}
	}
	return stuck
}

// takeLocked takes the first waiting run; one waits.
func (p *runners) takeLocked() *streamRun {
	run := p.queue[p.head]
	p.queue[p.head] = nil
	p.head++
	return run
}
