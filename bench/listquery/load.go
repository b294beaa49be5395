package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// concurrentResult is one throughput phase: conns workers sending the query back to back.
type concurrentResult struct {
	requests, failures int
	wall               time.Duration
	cpu                time.Duration // the server's utime+stime over the phase
	load               float64       // the machine's 1-minute load average at the start
}

func (r concurrentResult) rate() float64 { return float64(r.requests) / r.wall.Seconds() }
func (r concurrentResult) cpuPerRequest() time.Duration {
	return r.cpu / time.Duration(max(1, r.requests))
}

// serialResult is one phase of one client at a time.
type serialResult struct {
	latencies []time.Duration // sorted
	failures  int
	cpu       time.Duration
	load      float64
}

func (r serialResult) quantile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, int(q*float64(len(r.latencies))))]
}

func (r serialResult) cpuPerRequest() time.Duration {
	return r.cpu / time.Duration(max(1, len(r.latencies)))
}

type phaseResult struct {
	concurrent concurrentResult
	serial     serialResult
}

func (r phaseResult) String() string {
	c, s := r.concurrent, r.serial
	return fmt.Sprintf("%7.1f req/s  %6.2f ms CPU/req (load %.1f) | 1 client p50 %6.2f ms p99 %6.2f ms %6.2f ms CPU/req (load %.1f)  failures %d",
		c.rate(), ms(c.cpuPerRequest()), c.load, ms(s.quantile(0.5)), ms(s.quantile(0.99)), ms(s.cpuPerRequest()), s.load,
		c.failures+s.failures)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
}

// send posts the query and reports whether the answer was a 200 without errors.
func send(ctx context.Context, client *http.Client, url string, query []byte) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(query))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return err == nil && resp.StatusCode == http.StatusOK && !bytes.Contains(body, []byte(`"errors"`))
}

// hammer runs conns workers for d and returns how many requests succeeded and failed.
func hammer(ctx context.Context, t *target, query []byte, conns int, d time.Duration) (ok, failed int) {
	client := newClient(conns)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var okN, failedN atomic.Int64
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if send(ctx, client, t.url, query) {
					okN.Add(1)
				} else if ctx.Err() == nil {
					failedN.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(okN.Load()), int(failedN.Load())
}

func measureConcurrent(ctx context.Context, t *target, query []byte, conns int, d time.Duration) concurrentResult {
	load := loadAverage()
	cpu0 := t.cpu()
	start := time.Now()
	ok, failed := hammer(ctx, t, query, conns, d)
	return concurrentResult{requests: ok, failures: failed, wall: time.Since(start), cpu: t.cpu() - cpu0, load: load}
}

func measureSerial(ctx context.Context, t *target, query []byte, d time.Duration) serialResult {
	client := newClient(1)
	defer client.CloseIdleConnections()
	send(ctx, client, t.url, query) // open the connection outside the measurement
	r := serialResult{load: loadAverage()}
	cpu0 := t.cpu()
	for end := time.Now().Add(d); time.Now().Before(end) && ctx.Err() == nil; {
		start := time.Now()
		if send(ctx, client, t.url, query) {
			r.latencies = append(r.latencies, time.Since(start))
		} else {
			r.failures++
		}
	}
	r.cpu = t.cpu() - cpu0
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	return r
}

// cpu is the server's user+system CPU so far, from /proc/<pid>/stat (clock ticks of 1/100 s,
// the Linux USER_HZ).
func (t *target) cpu() time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", t.pid()))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after its ')' are fixed.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	return v
}

func cpus() int { return runtime.NumCPU() }
