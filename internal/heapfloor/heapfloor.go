// Package heapfloor keeps Go's collector from running every few megabytes while the live heap is
// small.
//
// The collector starts a cycle when the heap has grown by GOGC percent of what the last cycle
// found live (heap, stacks and globals). A server whose live heap is a few megabytes but which
// allocates a few megabytes per request (a GraphQL response of a hundred objects) therefore
// collects every request or two, and every cycle scans every goroutine's stack: in the list query
// that was over a third of the CPU. A floor lets the heap grow by at least Floor bytes between
// cycles: after each cycle the percentage is raised so that the next goal is live + Floor when
// live × GOGC/100 would be less (at most elevenfold the live heap: maxPercent), and put back to
// GOGC when the live heap has outgrown the floor.
// It is what a ballast of Floor bytes did, without adding the ballast once the live heap is large
// (then the heap may grow by GOGC percent, as without the floor).
//
// The environment still rules: GOGC=off leaves the collector to GOMEMLIMIT alone, and a
// GOMEMLIMIT below live + Floor makes the collector run earlier, as it always does near the
// limit. The memory this costs is at most Floor bytes of garbage held between cycles.
package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Default is the floor the server uses unless told otherwise.
const Default = 64 << 20

// tuner raises and restores the collector's percentage after each cycle.
type tuner struct {
	floor uint64
	// base is the percentage the process started with (GOGC, default 100).
	base int

	mu      sync.Mutex
	current int
	stopped bool
	samples []metrics.Sample
}

// running is the process's one tuner (the collector's percentage is process-wide) and how many
// Starts share it: servers started side by side in one process (tests) share the largest floor,
// and the last stop puts the starting percentage back.
var running struct {
	sync.Mutex
	t     *tuner
	users int
}

// Start keeps a floor of floor bytes of heap growth between collections until the returned stop
// is called; the last stop puts the starting percentage back. floor 0, or GOGC=off, does nothing.
func Start(floor uint64) (stop func()) {
	if floor == 0 {
		return func() {}
	}
	running.Lock()
	defer running.Unlock()
	if running.t == nil {
		base := debug.SetGCPercent(100)
		debug.SetGCPercent(base)
		if base < 0 {
			return func() {}
		}
		running.t = &tuner{floor: floor, base: base, current: base, samples: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
		}}
		running.t.adjust()
		running.t.arm()
	} else {
		running.t.raise(floor)
	}
	running.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			running.Lock()
			defer running.Unlock()
			if running.users--; running.users == 0 {
				running.t.stop()
				running.t = nil
			}
		})
	}
}

// raise makes the floor at least floor.
func (t *tuner) raise(floor uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.floor = max(t.floor, floor)
}

// sentinel is allocated for each cycle; its finalizer runs once a cycle found it unreachable.
// The pointer keeps it out of the tiny allocator, whose objects may be freed late.
type sentinel struct {
	_ *int
	_ [2]uint64
}

// arm allocates the next cycle's sentinel.
func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if t.adjust() {
			t.arm()
		}
	})
}

// adjust sets the percentage for the next cycle from what the last one found live, and reports
// whether the tuner is still running.
func (t *tuner) adjust() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.samples)
	var scannable uint64
	for _, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			scannable += s.Value.Uint64()
		}
	}
	want := Percent(t.base, t.floor, scannable)
	// Small moves are not worth telling the runtime about.
	if diff := want - t.current; diff > t.current/20 || -diff > t.current/20 {
		debug.SetGCPercent(want)
		t.current = want
	}
	return true
}

// stop ends the tuning and restores the starting percentage.
func (t *tuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	debug.SetGCPercent(t.base)
}

// maxPercent bounds the percentage, and so how far the heap may outgrow a live heap much smaller
// than the floor (at most 11 times). The percentage is set from one cycle's live heap and applies
// to the next cycle's: if the live heap grew tenfold in between, so does the headroom, and the
// bound keeps that burst within 5.5 times of the default goal.
const maxPercent = 1000

// Percent is the collector percentage that lets a heap whose last cycle found scannable bytes
// live grow by at least floor bytes, and by base percent when that is more.
func Percent(base int, floor, scannable uint64) int {
	if scannable == 0 {
		scannable = 1
	}
	if scannable*uint64(base)/100 >= floor {
		return base
	}
	p := (floor*100 + scannable - 1) / scannable
	if p > maxPercent {
		return maxPercent
	}
	return int(p)
}
