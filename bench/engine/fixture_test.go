package enginebench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
)

// commitWaiter routes the workspace's terminal fork events to the goroutines waiting for them. An
// event may arrive before its waiter asks (a fork can finish before StartFork's caller gets to
// wait), so outcomes are kept until claimed.
type commitWaiter struct {
	sub     *forkengine.Subscription
	mu      sync.Mutex
	done    map[string]forkengine.OperationStatus
	waiting map[string]chan forkengine.OperationStatus
	ended   chan struct{}
}

func newCommitWaiter(b *testing.B, broker *forkengine.Broker) *commitWaiter {
	w := &commitWaiter{sub: broker.Subscribe(workspaceID), done: map[string]forkengine.OperationStatus{},
		waiting: map[string]chan forkengine.OperationStatus{}, ended: make(chan struct{})}
	go w.route()
	return w
}

func (w *commitWaiter) route() {
	defer close(w.ended)
	for ev := range w.sub.C() {
		if ev.Kind != forkengine.EventForkOperationUpdated || !ev.Status.Terminal() {
			continue
		}
		w.mu.Lock()
		if ch, ok := w.waiting[ev.OperationID]; ok {
			delete(w.waiting, ev.OperationID)
			ch <- ev.Status
		} else {
			w.done[ev.OperationID] = ev.Status
		}
		w.mu.Unlock()
	}
}

// await blocks until the operation reaches a terminal status; anything but committed, or the
// event stream ending first, fails the benchmark.
func (w *commitWaiter) await(b *testing.B, operationID string) {
	w.mu.Lock()
	status, finished := w.done[operationID]
	delete(w.done, operationID)
	ch := make(chan forkengine.OperationStatus, 1)
	if !finished {
		w.waiting[operationID] = ch
	}
	w.mu.Unlock()
	if !finished {
		select {
		case status = <-ch:
		case <-w.ended:
			b.Fatalf("event stream ended before fork %s finished: %v", operationID, w.sub.Err())
		}
	}
	if status != forkengine.StatusCommitted {
		b.Fatalf("fork %s ended %s", operationID, status)
	}
}

func (w *commitWaiter) close() {
	w.sub.Close()
	<-w.ended
}

func sourceID(n int) string { return fmt.Sprintf("source-%d", n) }

func turnID(n int) string { return fmt.Sprintf("turn-%02d", n) }

// seedSource reports a source with settled, provider-bound turns and their messages.
func seedSource(b *testing.B, e *forkengine.Engine, id string) {
	ctx := context.Background()
	ptr := func(s string) *string { return &s }
	if _, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: workspaceID, ID: id,
		Provider: "simulated", ProviderSessionID: ptr("provider-" + id), Title: ptr("Benchmark source")}); err != nil {
		b.Fatalf("seed session %s: %v", id, err)
	}
	for t := 1; t <= sourceTurns; t++ {
		turn := id + "/" + turnID(t)
		if _, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: workspaceID, SessionID: id, ID: turn,
			Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, ProviderTurnID: ptr("provider-" + turn),
			ProviderTurnBinding: json.RawMessage(`{"checkpoint":"` + turn + `"}`)}); err != nil {
			b.Fatalf("seed %s: %v", turn, err)
		}
		msgs := make([]forkengine.MessageInput, messagesPerTurn)
		for m := range msgs {
			msgs[m] = forkengine.MessageInput{Role: forkengine.RoleAssistant,
				Content: fmt.Sprintf("%s: message %d with a few words of content to copy", turn, m)}
		}
		if _, err := e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: workspaceID, SessionID: id,
			TurnID: turn, Messages: msgs}); err != nil {
			b.Fatalf("seed messages of %s: %v", turn, err)
		}
	}
}
