package main

import (
	"fmt"
	"runtime"
	"time"
)

// memory is the server's memory before and after the subscribers connected, in bytes.
type memory struct {
	rssBefore, rssAfter   int64
	liveBefore, liveAfter int64 // heap in use + stacks after a forced GC
}

// report prints the run's figures as a Markdown table, ready for docs/BENCHMARKS.md.
func report(o options, f *fleet, d driven, delivered int, m memory) {
	var total, least, most int64
	least = -1
	for _, s := range f.subs {
		n := s.events.Load()
		total += n
		least = min64(least, n)
		most = max(most, n)
	}
	perConn := float64(m.rssAfter-m.rssBefore) / float64(len(f.subs)) / 1024
	livePerConn := float64(m.liveAfter-m.liveBefore) / float64(len(f.subs)) / 1024
	fmt.Printf("\n## fan-out: %d subscribers over %d instance(s) (%s, %d CPUs, GOOS=%s)\n\n", len(f.subs), o.instances,
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.GOOS)
	fmt.Println("| figure | value |")
	fmt.Println("|---|---|")
	fmt.Printf("| subscribers connected (init + ack + subscribe) | %d in %s (%.0f/s) |\n", len(f.subs), f.connectWall.Round(time.Millisecond), float64(len(f.subs))/f.connectWall.Seconds())
	fmt.Printf("| handshake p50 / p99 | %s / %s |\n", f.handshakes.quantile(0.50), f.handshakes.quantile(0.99))
	fmt.Printf("| load | %d mutations (%d turn reports, %d fork cycles of 5 mutations) in %s: %.1f mutations/s, %.1f events/s, %.2f forks/s |\n",
		d.mutations, o.turns, o.forks, d.wall.Round(time.Millisecond), float64(d.mutations)/d.wall.Seconds(),
		float64(most)/d.wall.Seconds(), float64(o.forks)/d.wall.Seconds())
	fmt.Printf("| CPU during load + delivery: server / this client program | %.1f s / %.1f s |\n", d.serverCPU, d.clientCPU)
	fmt.Printf("| events delivered | %d (per subscriber: min %d, max %d) |\n", total, least, most)
	fmt.Printf("| subscribers that got the end marker | %d of %d |\n", delivered, len(f.subs))
	fmt.Printf("| delivery latency p50 / p99 / max | %s / %s / %s |\n", f.latency.quantile(0.50), f.latency.quantile(0.99), time.Duration(f.latency.max.Load()).Round(time.Millisecond))
	if len(f.perInstance) > 1 {
		for i, h := range f.perInstance {
			fmt.Printf("| delivery latency p50 / p99 / max, subscribers of instance %d%s | %s / %s / %s |\n", i, loadNote(i),
				h.quantile(0.50), h.quantile(0.99), time.Duration(h.max.Load()).Round(time.Millisecond))
		}
	}
	fmt.Printf("| server RSS before / after connecting | %.1f MiB / %.1f MiB |\n", float64(m.rssBefore)/(1<<20), float64(m.rssAfter)/(1<<20))
	gogc := o.serverGOGC
	if gogc == "" {
		gogc = "default (100)"
	}
	fmt.Printf("| server memory per connection (RSS delta / N, server GOGC %s) | %.1f KiB |\n", gogc, perConn)
	fmt.Printf("| live memory per connection (heap in use + goroutine stacks after a forced GC, delta / N) | %.1f KiB |\n", livePerConn)
	fmt.Printf("| client read errors | %d |\n", f.readErrors.Load())
}

// loadNote marks the instance the load is driven through.
func loadNote(i int) string {
	if i == 0 {
		return " (takes the writes)"
	}
	return ""
}

func min64(a, b int64) int64 {
	if a < 0 || b < a {
		return b
	}
	return a
}
