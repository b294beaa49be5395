package multiinstance

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Identical requests, and the goroutines that send them, alternating between the instances.
const (
	identicalRequests = 200
	requestSenders    = 8
)

// TestOneOperationAcrossInstances: 200 identical forkSession requests spread over A and B make
// one operation and one provider /fork call; afterwards the barrier holds across instances: a new
// requestId on the same boundary, on either instance, gets that operation back. And 40 requests
// with distinct requestIds on a fresh boundary, at once over both instances, also make one.
func TestOneOperationAcrossInstances(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	a, b := c.start("a"), c.start("b")
	ctx := context.Background()
	apis := []*Client{client(a), client(b)}
	if err := apis[0].ReportSource(ctx, workspace, "bar", "webhook", "", 2); err != nil {
		t.Fatal(err)
	}
	ids := forkConcurrently(t, apis, identicalRequests, "bar-t2", func(int) string { return "identical" })
	op := onlyOperation(t, ids)
	got, err := apis[1].AwaitOperation(ctx, workspace, op, streamIdle, Operation.Terminal)
	if err != nil || got.Status != "COMMITTED" {
		t.Fatalf("operation %+v (%v), want COMMITTED", got, err)
	}
	for i, api := range apis {
		again, err := api.Fork(ctx, workspace, "bar", "bar-t2", fmt.Sprintf("new-request-%d", i))
		if err != nil || again.ID != op {
			t.Errorf("a new requestId on instance %d got %+v (%v), want the existing operation %s", i, again, err, op)
		}
	}
	ops, err := apis[0].Operations(ctx, workspace, "bar-t2")
	if err != nil || len(ops) != 1 {
		t.Errorf("operations through bar-t2: %+v (%v), want exactly one", ops, err)
	}

	distinct := forkConcurrently(t, apis, 40, "bar-t1", func(i int) string { return fmt.Sprintf("distinct-%d", i) })
	op1 := onlyOperation(t, distinct)
	if _, err := apis[0].AwaitOperation(ctx, workspace, op1, streamIdle, Operation.Terminal); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{op, op1} {
		if calls := c.adapter.ForkCallsOf(id); len(calls) != 1 {
			t.Errorf("/fork calls of %s: %+v, want exactly one", id, calls)
		}
	}
	if calls := c.adapter.ForkCalls(); len(calls) != 2 {
		t.Errorf("%d /fork calls in all, want 2: %+v", len(calls), calls)
	}
}

// forkConcurrently sends n fork requests through turn of session bar from requestSenders
// goroutines, request i to instance i mod len(apis) with requestID(i), and returns the
// operation ids they got.
func forkConcurrently(t *testing.T, apis []*Client, n int, turn string, requestID func(int) string) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for g := range requestSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += requestSenders {
				op, err := apis[i%len(apis)].Fork(context.Background(), workspace, "bar", turn, requestID(i))
				ids[i], errs[i] = op.ID, err
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return ids
}

// onlyOperation asserts every request got the same operation and returns it.
func onlyOperation(t *testing.T, ids []string) string {
	t.Helper()
	seen := map[string]int{}
	for _, id := range ids {
		seen[id]++
	}
	if len(seen) != 1 {
		t.Fatalf("%d requests made %d operations: %v", len(ids), len(seen), seen)
	}
	return ids[0]
}
