package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

// summary is the median of each figure over a server's rounds.
type summary struct {
	rate, cpuConc, p50, p99, cpuSerial float64 // req/s; ms
	loads                              []float64
}

func summarize(rs []phaseResult) summary {
	var s summary
	var rate, cpuConc, p50, p99, cpuSerial []float64
	for _, r := range rs {
		rate = append(rate, r.concurrent.rate())
		cpuConc = append(cpuConc, ms(r.concurrent.cpuPerRequest()))
		p50 = append(p50, ms(r.serial.quantile(0.5)))
		p99 = append(p99, ms(r.serial.quantile(0.99)))
		cpuSerial = append(cpuSerial, ms(r.serial.cpuPerRequest()))
		s.loads = append(s.loads, r.concurrent.load, r.serial.load)
	}
	s.rate, s.cpuConc, s.p50, s.p99, s.cpuSerial = median(rate), median(cpuConc), median(p50), median(p99), median(cpuSerial)
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func report(targets []*target, results map[string][]phaseResult) {
	fmt.Printf("\nmedians over the rounds (100 session rows per request)\n")
	fmt.Printf("%-10s %9s %12s %14s %9s %9s %12s  %s\n", "server", "req/s", "ms CPU/req", "µs CPU/row", "p50 ms", "p99 ms", "ms CPU/req¹", "load average (min–max)")
	sums := map[string]summary{}
	for _, t := range targets {
		s := summarize(results[t.name])
		sums[t.name] = s
		lo, hi := minMax(s.loads)
		fmt.Printf("%-10s %9.1f %12.2f %14.1f %9.2f %9.2f %12.2f  %.1f–%.1f\n",
			t.name, s.rate, s.cpuConc, s.cpuConc*1000/100, s.p50, s.p99, s.cpuSerial, lo, hi)
	}
	fmt.Printf("¹ one client at a time\n\n")
	anchor := sums["anchor"]
	for _, t := range targets {
		if !t.forkgraph {
			continue
		}
		s := sums[t.name]
		fmt.Printf("%s/anchor: req/s %.2f× (aim ≥ 0.8×), CPU/request %.2f×, p50 %.2f× (p50 %.2f ms, aim ≤ 6 ms)\n",
			t.name, s.rate/anchor.rate, s.cpuConc/anchor.cpuConc, s.p50/anchor.p50, s.p50)
	}
	if b, ok := sums["baseline"]; ok {
		f := sums["forkgraph"]
		fmt.Printf("forkgraph/baseline: req/s %.2f×, CPU/request %.2f×, p50 %.2f×\n", f.rate/b.rate, f.cpuConc/b.cpuConc, f.p50/b.p50)
	}
}

func minMax(v []float64) (float64, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// profileUnderLoad writes a 10 s CPU profile of the last forkgraph target to path while conns
// clients send the query (one: the one-client phase's critical path and CPU).
func profileUnderLoad(ctx context.Context, targets []*target, query []byte, conns int, path string) error {
	t := targets[len(targets)-1]
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		hammer(ctx, t, query, conns, 11*time.Second)
	}()
	defer wg.Wait()
	// The CPU profile and the allocations made meanwhile (a delta profile) cover the same 10 s.
	errs := make(chan error, 1)
	go func() { errs <- download(t.debug+"/debug/pprof/allocs?seconds=10", path+".allocs") }()
	if err := download(t.debug+"/debug/pprof/profile?seconds=10", path); err != nil {
		return fmt.Errorf("profile %s: %w", t.name, err)
	}
	if err := <-errs; err != nil {
		return fmt.Errorf("allocation profile %s: %w", t.name, err)
	}
	fmt.Printf("CPU profile of %s under %d connections: %s, allocations: %s.allocs (go tool pprof -top FILE)\n",
		t.name, conns, path, path)
	return nil
}

func download(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
