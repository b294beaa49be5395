package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

const benchWorkspace = "bench"

// benchForks runs clients fork loops for duration, client i against instance i mod len(ins),
// and prints committed forks per second.
func benchForks(ctx context.Context, ins []*multiinstance.Instance, clients int, duration time.Duration) error {
	apis := make([]*multiinstance.Client, clients)
	for i := range apis {
		apis[i] = multiinstance.NewClient(ins[i%len(ins)].GraphQLURL())
		if err := apis[i].ReportSource(ctx, benchWorkspace, fmt.Sprintf("src-%d", i), "simulated", "", 1); err != nil {
			return err
		}
	}
	var (
		mu     sync.Mutex
		cycles []time.Duration
		errs   []error
		wg     sync.WaitGroup
	)
	start := time.Now()
	stop := start.Add(duration)
	for i, api := range apis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			source := fmt.Sprintf("src-%d", i)
			for n := 0; time.Now().Before(stop); n++ {
				began := time.Now()
				err := forkCycle(ctx, api, source, fmt.Sprintf("c%d-%d", i, n))
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					cycles = append(cycles, time.Since(began))
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	fmt.Printf("forks: %d instances, %d clients, %s: %d committed, %.1f committed forks/s\n",
		len(ins), clients, elapsed.Round(time.Millisecond), len(cycles), float64(len(cycles))/elapsed.Seconds())
	fmt.Printf("fork cycle (request, poll to COMMITTED, acknowledge): %s\n", summary(cycles))
	fmt.Printf("load average after: %s\n", loadAverage())
	return errors.Join(errs...)
}

// forkCycle forks source through its turn, waits for COMMITTED and acknowledges it.
func forkCycle(ctx context.Context, api *multiinstance.Client, source, requestID string) error {
	op, err := api.Fork(ctx, benchWorkspace, source, source+"-t1", requestID)
	if err != nil {
		return fmt.Errorf("fork %s: %w", requestID, err)
	}
	for deadline := time.Now().Add(30 * time.Second); !op.Terminal(); {
		if time.Now().After(deadline) {
			return fmt.Errorf("fork %s not terminal within 30s: %+v", requestID, op)
		}
		time.Sleep(5 * time.Millisecond) // closed loop: poll the API, bounded by the deadline
		if op, _, err = api.Operation(ctx, benchWorkspace, op.ID); err != nil {
			return err
		}
	}
	if op.Status != "COMMITTED" {
		return fmt.Errorf("fork %s ended %+v", requestID, op)
	}
	return api.Do(ctx, `mutation($w: ID!, $id: ID!) { acknowledgeForkOperation(workspaceId: $w, id: $id) { id } }`,
		map[string]any{"w": benchWorkspace, "id": op.ID}, nil)
}
