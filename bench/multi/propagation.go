package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/forkgraph/forkgraph/internal/multiinstance"
)

// arrivals records when each turn's event reached one subscriber.
type arrivals struct {
	mu       sync.Mutex
	seen     map[string]time.Time
	occurred map[string]time.Time
}

// follow reads s until it has n turn events (or fails) and records their arrival.
func (a *arrivals) follow(ctx context.Context, s *multiinstance.Stream, n int, done chan<- error) {
	for got := 0; got < n; {
		ev, err := s.NextEvent(ctx, 30*time.Second)
		if err != nil {
			done <- fmt.Errorf("after %d turn events: %w", got, err)
			return
		}
		now := time.Now()
		if ev.Kind != "TURN_UPSERTED" || ev.TurnID == nil {
			continue
		}
		at, _ := time.Parse(time.RFC3339Nano, ev.OccurredAt)
		a.mu.Lock()
		a.seen[*ev.TurnID], a.occurred[*ev.TurnID] = now, at
		a.mu.Unlock()
		got++
	}
	done <- nil
}

// benchPropagation writes n turns on a, one every interval, and measures their arrival at a
// subscriber on b (and, for comparison, on a).
func benchPropagation(ctx context.Context, a, b *multiinstance.Instance, n int, interval time.Duration) error {
	onA := multiinstance.NewClient(a.GraphQLURL())
	if err := onA.ReportSession(ctx, benchWorkspace, "prop", "simulated", ""); err != nil {
		return err
	}
	// Subscribing after workspaceEventCursor means no write is missed while a subscription is
	// being registered, so the first measured write needs no warm-up.
	cursor, err := onA.EventCursor(ctx, benchWorkspace)
	if err != nil {
		return err
	}
	subs := map[string]*arrivals{}
	done := make(chan error, 2)
	for name, in := range map[string]*multiinstance.Instance{"B (other instance)": b, "A (same instance)": a} {
		s, err := multiinstance.SubscribeEvents(ctx, in.WebsocketURL(), benchWorkspace, cursor)
		if err != nil {
			return err
		}
		defer s.Close()
		subs[name] = &arrivals{seen: map[string]time.Time{}, occurred: map[string]time.Time{}}
		go subs[name].follow(ctx, s, n, done)
	}
	sent := map[string]time.Time{}
	var answered []time.Duration
	for i := range n {
		id := fmt.Sprintf("prop-t%d", i)
		t0 := time.Now()
		sent[id] = t0
		if err := onA.ReportSettledTurn(ctx, benchWorkspace, "prop", id); err != nil {
			return err
		}
		answered = append(answered, time.Since(t0))
		time.Sleep(interval) // the load's pacing, not a synchronisation
	}
	for range subs {
		if err := <-done; err != nil {
			return err
		}
	}
	fmt.Printf("propagation: %d writes on A, one every %s\n", n, interval)
	fmt.Printf("  write answered on A (HTTP round trip):  %s\n", summary(answered))
	for _, name := range []string{"A (same instance)", "B (other instance)"} {
		var fromSend, fromOccurred []time.Duration
		for id, t0 := range sent {
			fromSend = append(fromSend, subs[name].seen[id].Sub(t0))
			fromOccurred = append(fromOccurred, subs[name].seen[id].Sub(subs[name].occurred[id]))
		}
		fmt.Printf("  seen on %s, from send:       %s\n", name, summary(fromSend))
		fmt.Printf("  seen on %s, from occurredAt: %s\n", name, summary(fromOccurred))
	}
	fmt.Printf("load average after: %s\n", loadAverage())
	return nil
}
