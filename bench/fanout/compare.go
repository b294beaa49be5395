package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// The A/B mode (-compare): the same subscribers and events against several servers, run in turn
// round after round (A/B/A/B), each run on a freshly started server, so that the shared machine's
// load falls on all of them alike. Figures per run, then the median of each and its ratio to the
// anchor.

// abResult is one run's figures.
type abResult struct {
	load1                float64 // load average (1 min) when the run started
	connect              time.Duration
	p50, p99, max        time.Duration
	firstP50, firstMax   time.Duration // over events: the first subscriber's delivery (the pipeline before the fan-out)
	cpuPerMessage        float64       // server CPU µs per delivered event message
	rssPerConn           float64       // KiB: RSS delta over connecting / N
	delivered, expected  int64
	gotEnd, subscribers  int
	serverCPU, wallDrive time.Duration
}

// parseTargets reads -compare: comma-separated name=repo pairs for forkgraph builds and the word
// "anchor" for the stock gqlgen todo server.
func parseTargets(spec, anchors string) ([]target, error) {
	var ts []target
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		switch name, repo, ok := strings.Cut(item, "="); {
		case item == "anchor":
			ts = append(ts, &anchorTarget{anchors: anchors})
		case ok && name != "" && repo != "":
			ts = append(ts, &forkgraphTarget{name: name, repo: repo})
		default:
			return nil, fmt.Errorf("-compare item %q: want name=repo or anchor", item)
		}
	}
	return ts, nil
}

func runCompare(ctx context.Context, o options) error {
	if _, err := raiseFileLimit(); err != nil {
		return err
	}
	targets, err := parseTargets(o.compare, o.anchors)
	if err != nil {
		return err
	}
	defer func() {
		for _, t := range targets {
			t.cleanup()
		}
	}()
	results := map[string][]abResult{}
	fmt.Printf("\n## fan-out A/B: %d subscribers, %d events at ≤ %.0f/s, %d rounds (%s)\n\n", o.subscribers, o.events, o.rate,
		o.rounds, time.Now().UTC().Format(time.RFC3339))
	fmt.Println("| run | server | load avg | connect | delivered | end marker | first delivery p50 / max | p50 | p99 | max | server CPU | CPU µs / message | RSS KiB / conn |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	run := 0
	for round := 0; round < o.rounds; round++ {
		for _, t := range targets {
			run++
			r, err := runOnce(ctx, t, o)
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", t.label(), round+1, err)
			}
			results[t.label()] = append(results[t.label()], r)
			fmt.Printf("| %d | %s | %.1f | %s | %d / %d | %d / %d | %s / %s | %s | %s | %s | %.1f s | %.1f | %.1f |\n", run, t.label(), r.load1,
				r.connect.Round(time.Millisecond), r.delivered, r.expected, r.gotEnd, r.subscribers, r.firstP50, r.firstMax, r.p50, r.p99,
				r.max.Round(time.Millisecond), r.serverCPU.Seconds(), r.cpuPerMessage, r.rssPerConn)
		}
	}
	printMedians(targets, results)
	return nil
}

func printMedians(targets []target, results map[string][]abResult) {
	fmt.Println("\nMedians (ratio to the anchor's median):")
	fmt.Println()
	fmt.Println("| server | p99 | CPU µs / message | RSS KiB / conn |")
	fmt.Println("|---|---|---|---|")
	anchor, hasAnchor := results["anchor"]
	for _, t := range targets {
		rs := results[t.label()]
		p99 := median(rs, func(r abResult) float64 { return float64(r.p99) })
		cpu := median(rs, func(r abResult) float64 { return r.cpuPerMessage })
		rss := median(rs, func(r abResult) float64 { return r.rssPerConn })
		if !hasAnchor || t.label() == "anchor" {
			fmt.Printf("| %s | %s | %.1f | %.1f |\n", t.label(), time.Duration(p99), cpu, rss)
			continue
		}
		ap99 := median(anchor, func(r abResult) float64 { return float64(r.p99) })
		acpu := median(anchor, func(r abResult) float64 { return r.cpuPerMessage })
		arss := median(anchor, func(r abResult) float64 { return r.rssPerConn })
		fmt.Printf("| %s | %s (%.2f×) | %.1f (%.2f×) | %.1f (%.2f×) |\n", t.label(), time.Duration(p99), p99/ap99, cpu, cpu/acpu, rss, rss/arss)
	}
}

func median(rs []abResult, f func(abResult) float64) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	sort.Float64s(vs)
	if len(vs) == 0 {
		return 0
	}
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// abSubscriber is one client of an A/B run.
type abSubscriber struct {
	conn   *websocket.Conn
	events atomic.Int64
	mark   atomic.Value // string: the last marker tag seen
}

// abFleet is every subscriber of a run plus the driver's send times.
type abFleet struct {
	t       target
	subs    []*abSubscriber
	sent    []atomic.Int64 // UnixNano the driver sent event i
	first   []atomic.Int64 // UnixNano the first subscriber received event i (0: none yet)
	latency *histogram
	wg      sync.WaitGroup
}

func runOnce(ctx context.Context, t target, o options) (abResult, error) {
	r := abResult{load1: loadAverage(), subscribers: o.subscribers, expected: int64(o.events * o.subscribers)}
	p, err := t.start(ctx)
	if err != nil {
		return r, err
	}
	defer p.stop()
	rss0, err := rssOfPid(p.pid)
	if err != nil {
		return r, err
	}
	f := &abFleet{t: t, subs: make([]*abSubscriber, o.subscribers), sent: make([]atomic.Int64, o.events),
		first: make([]atomic.Int64, o.events), latency: newHistogram()}
	defer f.close()
	began := time.Now()
	if err := f.connect(ctx, p.wsURL, o.dialers); err != nil {
		return r, err
	}
	r.connect = time.Since(began)
	if err := f.awaitLive(ctx, p); err != nil {
		return r, err
	}
	sleep(ctx, 2000) // let the server's allocations settle before reading RSS
	rss1, err := rssOfPid(p.pid)
	if err != nil {
		return r, err
	}
	r.rssPerConn = float64(rss1-rss0) / float64(o.subscribers) / 1024
	if o.memProfile != "" && p.debug != "" {
		stamp := fmt.Sprintf("%s/%s-%d", o.memProfile, t.label(), time.Now().Unix())
		saveDebug(ctx, p.debug+"/debug/pprof/heap?gc=1", stamp+"-heap.pprof")
		saveDebug(ctx, p.debug+"/debug/pprof/goroutine?debug=1", stamp+"-goroutines.txt")
		saveDebug(ctx, p.debug+"/debug/pprof/heap?debug=1&gc=1", stamp+"-memstats.txt")
	}
	for _, s := range f.subs {
		s.events.Store(0)
	}
	if o.profile != "" && p.debug != "" {
		go saveProfile(ctx, p.debug, fmt.Sprintf("%s/%s-%d.pprof", o.profile, t.label(), time.Now().Unix()))
	}
	cpu0, _ := cpuSeconds(p.pid)
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / o.rate))
	for i := 0; i < o.events; i++ {
		<-tick.C
		f.sent[i].Store(time.Now().UnixNano())
		if err := t.emit(ctx, p, "ev-"+strconv.Itoa(i)); err != nil {
			tick.Stop()
			return r, fmt.Errorf("emit event %d: %w", i, err)
		}
	}
	tick.Stop()
	if err := t.emit(ctx, p, "mark-end"); err != nil {
		return r, err
	}
	r.gotEnd = f.awaitMark(ctx, "mark-end", 60*time.Second)
	r.wallDrive = time.Since(start)
	cpu1, _ := cpuSeconds(p.pid)
	r.serverCPU = time.Duration((cpu1 - cpu0) * float64(time.Second))
	for _, s := range f.subs {
		r.delivered += s.events.Load()
	}
	if r.delivered > 0 {
		r.cpuPerMessage = (cpu1 - cpu0) * 1e6 / float64(r.delivered)
	}
	r.p50, r.p99 = f.latency.quantile(0.50), f.latency.quantile(0.99)
	r.max = time.Duration(f.latency.max.Load())
	firsts := newHistogram()
	for i := range f.first {
		if at := f.first[i].Load(); at != 0 {
			firsts.add(time.Duration(at - f.sent[i].Load()))
		}
	}
	r.firstP50, r.firstMax = firsts.quantile(0.5), time.Duration(firsts.max.Load()).Round(time.Millisecond)
	return r, nil
}

func (f *abFleet) connect(ctx context.Context, url string, dialers int) error {
	jobs := make(chan int)
	var failed atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < dialers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s, err := f.dial(ctx, url, strconv.Itoa(i))
				if err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("subscriber %d: %w", i, err))
					continue
				}
				f.subs[i] = s
			}
		}()
	}
	for i := range f.subs {
		if failed.Load() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return err
	}
	return nil
}

func (f *abFleet) dial(ctx context.Context, url, id string) (*abSubscriber, error) {
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, ReadBufferSize: 512, WriteBufferSize: 512,
		HandshakeTimeout: 30 * time.Second}
	conn, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var ack struct{ Type string }
	if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		conn.Close()
		return nil, fmt.Errorf("no connection_ack (%q): %v", ack.Type, err)
	}
	if err := conn.WriteJSON(map[string]any{"id": id, "type": "subscribe", "payload": f.t.subscription()}); err != nil {
		conn.Close()
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Time{})
	s := &abSubscriber{conn: conn}
	s.mark.Store("")
	f.wg.Add(1)
	go f.read(s)
	return s, nil
}

func (f *abFleet) read(s *abSubscriber) {
	defer f.wg.Done()
	for {
		_, data, err := s.conn.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now()
		tag := f.t.tagOf(data)
		switch {
		case strings.HasPrefix(tag, "mark-"):
			s.mark.Store(tag)
		case strings.HasPrefix(tag, "ev-"):
			if i, err := strconv.Atoi(tag[3:]); err == nil && i < len(f.sent) {
				f.latency.add(now.Sub(time.Unix(0, f.sent[i].Load())))
				f.first[i].CompareAndSwap(0, now.UnixNano())
				s.events.Add(1)
			}
		}
	}
}

// awaitLive emits markers until every subscriber has received one: all subscriptions are then
// registered on the server.
func (f *abFleet) awaitLive(ctx context.Context, p *process) error {
	for attempt := 0; attempt < 30; attempt++ {
		mark := fmt.Sprintf("mark-live-%d", attempt)
		if err := f.t.emit(ctx, p, mark); err != nil {
			return err
		}
		if f.awaitMark(ctx, mark, 5*time.Second) == len(f.subs) {
			return nil
		}
	}
	return fmt.Errorf("not every subscriber received events after 30 attempts")
}

func (f *abFleet) awaitMark(ctx context.Context, mark string, within time.Duration) int {
	return awaitMarks(ctx, f.subs, func(s *abSubscriber) *atomic.Value { return &s.mark }, mark, within)
}

func (f *abFleet) close() {
	for _, s := range f.subs {
		if s != nil {
			_ = s.conn.Close()
		}
	}
	f.wg.Wait()
}

// loadAverage is the machine's 1-minute load average (0 when unreadable).
func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	return v
}

func sleep(ctx context.Context, ms int) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
}

// saveProfile writes a 10 s CPU profile of the server to path (-profile; failures are reported
// and otherwise ignored: the profile is a diagnostic, not a figure).
func saveProfile(ctx context.Context, debug, path string) {
	saveDebug(ctx, debug+"/debug/pprof/profile?seconds=10", path)
}

// saveDebug writes what the server's debug URL answers to path (failures are reported and
// otherwise ignored).
func saveDebug(ctx context.Context, url, path string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err == nil {
		var resp *http.Response
		if resp, err = http.DefaultClient.Do(req); err == nil {
			defer resp.Body.Close()
			var f *os.File
			if f, err = os.Create(path); err == nil {
				_, err = io.Copy(f, resp.Body)
				f.Close()
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout: profile:", err)
	}
}
