package transports

import (
	"runtime"
	"sync"
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

// runners runs woken operations, in the order they woke, on at most max goroutines, and on one
// more whenever the queue has not moved for runnerStall: a runner writes to its client, and a
// client that stopped reading may hold that write until WriteTimeout.
type runners struct {
	max int
	run func(*streamRun) // continues one woken operation (nil: its connection's stream; tests replace it)

	mu       sync.Mutex
	queue    []*streamRun
	head     int // queue[head:] waits
	running  int
	progress uint64 // runs finished; unchanged over runnerStall means every runner is stuck
	watching bool   // a stall check is armed
}

// start continues run on a runner.
func (p *runners) start(run *streamRun) {
	p.mu.Lock()
	if p.running < p.max {
		p.running++
		p.mu.Unlock()
		go p.loop(run)
		return
	}
	p.queue = append(p.queue, run)
	p.watchLocked()
	p.mu.Unlock()
}

// yieldEvery is how many runs a runner does before it yields its thread. A burst keeps a
// runner busy far longer than the scheduler's 10 ms time slice, and the runtime then stops it
// with an asynchronous preemption (a signal, and every register saved and restored: 7 % of a
// 10,000-subscriber fan-out's CPU by profile); a run is some tens of microseconds, so yielding
// every yieldEvery runs gives the thread up before the slice ends, for the price of a Gosched.
const yieldEvery = 64

// loop runs run, then whatever waits, and ends when nothing does.
func (p *runners) loop(run *streamRun) {
	for n := 1; run != nil; n++ {
		if p.run != nil {
			p.run(run)
		} else {
			run.c.stream(run)
		}
		if n%yieldEvery == 0 {
			runtime.Gosched()
		}
		run = p.next()
	}
}

// next counts a finished run and takes the next waiting one (nil: the runner ends).
func (p *runners) next() *streamRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.progress++
	if p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
		if cap(p.queue) > 1024 {
			p.queue = nil // a burst's queue is not kept
		}
		p.running--
		return nil
	}
	run := p.queue[p.head]
	p.queue[p.head] = nil
	p.head++
	return run
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

// checkStall starts one more runner when the queue waits and no run has finished since seen.
func (p *runners) checkStall(seen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watching = false
	if p.head == len(p.queue) {
		return
	}
	if p.progress == seen {
		run := p.queue[p.head]
		p.queue[p.head] = nil
		p.head++
		p.running++
		go p.loop(run)
	}
	p.watchLocked()
}
