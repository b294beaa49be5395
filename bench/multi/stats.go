package main

import (
	"fmt"
	"slices"
	"time"
)

// summary formats count, p50, p99 and max of durations.
func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("n=%d p50=%s p99=%s max=%s", len(s), round(pct(s, 50)), round(pct(s, 99)), round(s[len(s)-1]))
}

// pct is the p-th percentile of sorted s (nearest rank).
func pct(s []time.Duration, p int) time.Duration {
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func round(d time.Duration) time.Duration {
	if d > 10*time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Microsecond)
}
