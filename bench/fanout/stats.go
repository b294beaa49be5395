package main

import (
	"sync/atomic"
	"time"
)

// histogram counts durations in 100µs buckets up to 60s, lock-free.
type histogram struct {
	buckets []atomic.Int64
	count   atomic.Int64
	max     atomic.Int64
}

const bucketWidth = 100 * time.Microsecond

func newHistogram() *histogram {
	return &histogram{buckets: make([]atomic.Int64, int(60*time.Second/bucketWidth)+1)}
}

func (h *histogram) add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	i := int(d / bucketWidth)
	if i >= len(h.buckets) {
		i = len(h.buckets) - 1
	}
	h.buckets[i].Add(1)
	h.count.Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// quantile returns the upper edge of the bucket holding quantile q (0..1).
func (h *histogram) quantile(q float64) time.Duration {
	total := h.count.Load()
	if total == 0 {
		return 0
	}
	target := int64(float64(total)*q + 0.5)
	if target < 1 {
		target = 1
	}
	var seen int64
	for i := range h.buckets {
		seen += h.buckets[i].Load()
		if seen >= target {
			return time.Duration(i+1) * bucketWidth
		}
	}
	return time.Duration(len(h.buckets)) * bucketWidth
}
