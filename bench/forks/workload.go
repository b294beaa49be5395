package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

const benchWorkspace = "bench"

// pollPause is the wait between two forkOperation reads of one client. A fork at zero latency
// commits within a few milliseconds of its request, so a short pause keeps the loop closed
// without flooding the server with reads.
const pollPause = 2 * time.Millisecond

// workload is the clients and their sources.
type workload struct {
	o       options
	clients []*multiinstance.Client
	next    []int // per client: the next request number
}

func newWorkload(url string, o options) *workload {
	w := &workload{o: o, next: make([]int, o.clients)}
	w.retarget(url)
	return w
}

// retarget points every client at url (the restarted server), each with its own keep-alive
// connection so no request waits for another client's.
func (w *workload) retarget(url string) {
	w.clients = make([]*multiinstance.Client, w.o.clients)
	for i := range w.clients {
		w.clients[i] = &multiinstance.Client{URL: url, HTTP: &http.Client{Timeout: 30 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 2}}}
	}
}

func source(i int) string { return fmt.Sprintf("src-%d", i) }

// seed reports one source per client: turns settled, provider-bound turns with messages each.
func (w *workload) seed(ctx context.Context) error {
	c := w.clients[0]
	for i := range w.o.clients {
		if err := c.ReportSource(ctx, benchWorkspace, source(i), "simulated", "", w.o.turns); err != nil {
			return err
		}
		for t := 1; t <= w.o.turns; t++ {
			turn := fmt.Sprintf("%s-t%d", source(i), t)
			msgs := make([]map[string]any, w.o.messages)
			for m := range msgs {
				msgs[m] = map[string]any{"role": "ASSISTANT", "content": fmt.Sprintf("%s: message %d with a few words of content to copy", turn, m)}
			}
			err := c.Do(ctx, `mutation($input: AppendMessagesInput!) { appendMessages(input: $input) { id } }`,
				map[string]any{"input": map[string]any{"workspaceId": benchWorkspace, "sessionId": source(i), "turnId": turn, "messages": msgs}}, nil)
			if err != nil {
				return fmt.Errorf("messages of %s: %w", turn, err)
			}
		}
	}
	return nil
}

// result is what one loop measured.
type result struct {
	forks   int
	polls   int
	elapsed time.Duration
	cycles  []time.Duration
}

// loop runs every client's fork cycle count times each (count > 0) or until duration is over.
func (w *workload) loop(ctx context.Context, name string, count int, duration time.Duration) (result, error) {
	var (
		mu   sync.Mutex
		res  result
		errs []error
		wg   sync.WaitGroup
	)
	start := time.Now()
	stop := start.Add(duration)
	for i, c := range w.clients {
		wg.Go(func() {
			for n := 0; (count > 0 && n < count) || (count == 0 && time.Now().Before(stop)); n++ {
				began := time.Now()
				req := fmt.Sprintf("%s-c%d-%d", name, i, w.next[i])
				w.next[i]++
				polls, err := w.cycle(ctx, c, source(i), req)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					res.forks++
					res.polls += polls
					res.cycles = append(res.cycles, time.Since(began))
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res, errors.Join(errs...)
}

// cycle forks src through its last turn, polls until the fork is terminal and acknowledges it.
func (w *workload) cycle(ctx context.Context, c *multiinstance.Client, src, requestID string) (int, error) {
	op, err := c.Fork(ctx, benchWorkspace, src, fmt.Sprintf("%s-t%d", src, w.o.turns), requestID)
	if err != nil {
		return 0, fmt.Errorf("fork %s: %w", requestID, err)
	}
	polls := 0
	for deadline := time.Now().Add(30 * time.Second); !op.Terminal(); polls++ {
		if time.Now().After(deadline) {
			return polls, fmt.Errorf("fork %s not terminal within 30s: %+v", requestID, op)
		}
		time.Sleep(pollPause) // closed loop: poll the API, bounded by the deadline
		if op, _, err = c.Operation(ctx, benchWorkspace, op.ID); err != nil {
			return polls, err
		}
	}
	if op.Status != "COMMITTED" {
		return polls, fmt.Errorf("fork %s ended %+v", requestID, op)
	}
	err = c.Do(ctx, `mutation($w: ID!, $id: ID!) { acknowledgeForkOperation(workspaceId: $w, id: $id) { id } }`,
		map[string]any{"w": benchWorkspace, "id": op.ID}, nil)
	return polls, err
}

// percentiles is "p50 … p90 … p99 …" of ds.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("p50 %s, p90 %s, p99 %s", at(0.5), at(0.9), at(0.99))
}
