package heapfloor

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/await"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		base             int
		floor, scannable uint64
		want             int
	}{
		{base: 100, floor: 64 * mib, scannable: 1 * mib, want: maxPercent},
		{base: 100, floor: 64 * mib, scannable: 7 * mib, want: 915}, // rounded up: at least the floor
		{base: 100, floor: 64 * mib, scannable: 64 * mib, want: 100},
		{base: 100, floor: 64 * mib, scannable: 500 * mib, want: 100},
		{base: 200, floor: 64 * mib, scannable: 40 * mib, want: 200}, // GOGC=200 already grows 80 MiB
		{base: 50, floor: 64 * mib, scannable: 64 * mib, want: 100},
		{base: 100, floor: 64 * mib, scannable: 0, want: maxPercent},
	} {
		if got := Percent(c.base, c.floor, c.scannable); got != c.want {
			t.Errorf("Percent(%d, %d, %d) = %d, want %d", c.base, c.floor, c.scannable, got, c.want)
		}
	}
}

// gogc reads the collector's percentage as the runtime holds it.
func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func cycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var sink []byte

// churn allocates n bytes of garbage in 64 KiB pieces and returns the collections it caused.
func churn(n int) uint64 {
	before := cycles()
	for range n / (64 << 10) {
		sink = make([]byte, 64<<10)
	}
	sink = nil
	return cycles() - before
}

// waitFor polls cond while finalizers run, failing after two seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	await.State(t, 2*time.Second, what, func() (bool, string) {
		if cond() {
			return true, ""
		}
		runtime.GC()
		return false, fmt.Sprintf("GOGC now %d", gogc())
	})
}

func TestFloorCutsCollectionsAndStopRestores(t *testing.T) {
	base := int(gogc())
	runtime.GC()
	without := churn(256 << 20)

	stop := Start(64 << 20)
	waitFor(t, "the floor to raise GOGC", func() bool { return int(gogc()) > base })
	with := churn(256 << 20)
	t.Logf("collections for 256 MiB of garbage: %d without the floor, %d with a 64 MiB floor (GOGC %d)", without, with, gogc())
	if with*4 > without {
		t.Errorf("with a 64 MiB floor 256 MiB of garbage took %d collections, without %d: want at most a quarter", with, without)
	}

	stop()
	if got := int(gogc()); got != base {
		t.Errorf("GOGC after stop = %d, want the starting %d", got, base)
	}
	// A stopped tuner stays stopped: later cycles leave the percentage alone.
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond) // the wait is the point: time for a tuner that ran on to act
	if got := int(gogc()); got != base {
		t.Errorf("GOGC after stop and two cycles = %d, want %d", got, base)
	}
}

func TestStartsShareOneTuner(t *testing.T) {
	base := int(gogc())
	stopA := Start(16 << 20)
	stopB := Start(64 << 20) // the larger floor wins while both run
	waitFor(t, "the larger floor", func() bool { return int(gogc()) >= Percent(base, 64<<20, 8<<20) })
	stopA()
	stopA() // a second call is a no-op, not another user's stop
	if got := int(gogc()); got == base {
		t.Fatalf("GOGC back at %d while a Start still runs", got)
	}
	stopB()
	if got := int(gogc()); got != base {
		t.Fatalf("GOGC after the last stop = %d, want %d", got, base)
	}
}

func TestLargeLiveHeapKeepsGOGC(t *testing.T) {
	base := int(gogc())
	live := make([]byte, 48<<20)
	for i := range live {
		live[i] = byte(i) // touched, so the test measures a real heap
	}
	stop := Start(16 << 20)
	defer stop()
	// The first adjustment may come from the start's own reading; after a cycle that found the
	// 48 MiB live, the percentage is the starting one again.
	runtime.GC()
	waitFor(t, "GOGC back at its base", func() bool { return int(gogc()) == base })
	runtime.KeepAlive(live)
}

func TestZeroFloorAndGOGCOffDoNothing(t *testing.T) {
	base := int(gogc())
	Start(0)()
	if got := int(gogc()); got != base {
		t.Fatalf("GOGC after a zero floor = %d, want %d", got, base)
	}
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	stop := Start(64 << 20)
	runtime.GC()
	time.Sleep(20 * time.Millisecond) // the wait is the point: time for the tuner to act on GOGC=off
	stop()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Fatalf("GOGC=off became %d", got)
	}
}
