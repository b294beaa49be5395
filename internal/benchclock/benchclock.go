// Package benchclock is what the repository's benchmarks measure besides ns/op: the process's CPU
// time, which on a shared machine moves much less with everyone else's load than wall time does,
// and ratios of one sub-benchmark's costs to another's measured in the same process (a deep page
// to a root's), which hold across runs where the absolute figures do not.
package benchclock

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU is the user and system CPU time this process has used so far.
func ProcessCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Ratios measures a set of sub-benchmarks against the first of them, the base: each reports its
// CPU per op (cpu-us/op), and every one after the base its CPU and wall time per op over the
// base's (x-root, x-root-wall). A zero Ratios has no base yet.
type Ratios struct {
	baseCPU, baseWall float64
}

// Measure runs op in b.Loop, reports what it cost, and when base is true keeps those costs as
// the base the later ones of r are divided by.
func (r *Ratios) Measure(b *testing.B, base bool, op func()) {
	cpu0, wall0 := ProcessCPU(b), time.Now()
	for b.Loop() {
		op()
	}
	cpu := float64(ProcessCPU(b)-cpu0) / float64(b.N) / 1e3
	wall := float64(time.Since(wall0).Nanoseconds()) / float64(b.N)
	b.ReportMetric(cpu, "cpu-us/op")
	switch {
	case base:
		r.baseCPU, r.baseWall = cpu, wall
	case r.baseCPU > 0:
		b.ReportMetric(cpu/r.baseCPU, "x-root")
		b.ReportMetric(wall/r.baseWall, "x-root-wall")
	}
}
