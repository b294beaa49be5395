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
	// With -wait events, each client's workspaceEvents subscription, and the terminal statuses
	// it has seen by operation (an event can arrive before forkSession's response does).
	streams  []*multiinstance.Stream
	terminal []map[string]string
}

func newWorkload(ctx context.Context, srv *multiinstance.Instance, o options) (*workload, error) {
	w := &workload{o: o, next: make([]int, o.clients)}
	return w, w.retarget(ctx, srv)
}

// retarget points every client at srv (the restarted server), each with its own keep-alive
// connection so no request waits for another client's, and with -wait events its own
// subscription.
func (w *workload) retarget(ctx context.Context, srv *multiinstance.Instance) error {
	w.close()
	w.clients = make([]*multiinstance.Client, w.o.clients)
	w.streams = make([]*multiinstance.Stream, w.o.clients)
	w.terminal = make([]map[string]string, w.o.clients)
	for i := range w.clients {
		w.clients[i] = &multiinstance.Client{URL: srv.GraphQLURL(), HTTP: &http.Client{Timeout: 30 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: 2}}}
		w.terminal[i] = map[string]string{}
		if w.o.wait == "events" {
			s, err := multiinstance.SubscribeEvents(ctx, srv.WebsocketURL(), benchWorkspace, "")
			if err != nil {
				return err
			}
			w.streams[i] = s
		}
	}
	return nil
}

// close ends the subscriptions.
func (w *workload) close() {
	for _, s := range w.streams {
		if s != nil {
			s.Close()
		}
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
	for i := range w.clients {
		wg.Go(func() {
			for n := 0; (count > 0 && n < count) || (count == 0 && time.Now().Before(stop)); n++ {
				began := time.Now()
				req := fmt.Sprintf("%s-c%d-%d", name, i, w.next[i])
				w.next[i]++
				polls, err := w.cycle(ctx, i, source(i), req)
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

// cycle forks src through its last turn as client i, waits until the fork is terminal (polling,
// or from client i's events) and acknowledges it.
func (w *workload) cycle(ctx context.Context, i int, src, requestID string) (int, error) {
	c := w.clients[i]
	op, err := c.Fork(ctx, benchWorkspace, src, fmt.Sprintf("%s-t%d", src, w.o.turns), requestID)
	if err != nil {
		return 0, fmt.Errorf("fork %s: %w", requestID, err)
	}
	if w.streams[i] != nil && !op.Terminal() {
		if op.Status, err = w.awaitEvent(ctx, i, op.ID); err != nil {
			return 0, fmt.Errorf("fork %s: %w", requestID, err)
		}
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

// awaitEvent reads client i's events until operation id is terminal and returns its status.
func (w *workload) awaitEvent(ctx context.Context, i int, id string) (string, error) {
	seen := w.terminal[i]
	for {
		if status, ok := seen[id]; ok {
			delete(seen, id)
			return status, nil
		}
		ev, err := w.streams[i].NextEvent(ctx, 30*time.Second)
		if err != nil {
			return "", err
		}
		if ev.ForkOperationID == nil || ev.ForkOperationStatus == nil {
			continue
		}
		switch status := *ev.ForkOperationStatus; status {
		case "COMMITTED", "FAILED", "UNKNOWN":
			seen[*ev.ForkOperationID] = status
		}
	}
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
