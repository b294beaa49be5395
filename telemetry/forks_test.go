package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/forkgraph/forkgraph/forkengine"
)

// storedOps answers GetOperation from a map, counting the reads.
type storedOps struct {
	forkengine.Reader
	mu    sync.Mutex
	ops   map[string]forkengine.ForkOperation
	reads int
}

func (r *storedOps) GetOperation(_ context.Context, _, id string) (forkengine.ForkOperation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	return r.ops[id], nil
}

type countingPublisher struct{ events int }

func (p *countingPublisher) Publish(events []forkengine.Event) { p.events += len(events) }

func forkEvent(id string, status forkengine.OperationStatus, at time.Time) forkengine.Event {
	return forkengine.Event{WorkspaceID: "w", Kind: forkengine.EventForkOperationUpdated, OperationID: id, Status: status, OccurredAt: at}
}

// histogram returns the count and sum of forkgraph_fork_duration_seconds{status}.
func histogram(t *testing.T, tel *Telemetry, status string) (uint64, float64) {
	t.Helper()
	m := &dto.Metric{}
	if err := tel.Metrics.forkDuration.WithLabelValues(status).(interface{ Write(*dto.Metric) error }).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

func TestForkPublisher(t *testing.T) {
	tel := New(Options{})
	next := &countingPublisher{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	acked := t0.Add(time.Minute)
	reader := &storedOps{ops: map[string]forkengine.ForkOperation{
		"b": {ID: "b", Status: forkengine.StatusFailed, CreatedAt: t0.Add(-10 * time.Second)},
		"c": {ID: "c", Status: forkengine.StatusCommitted, CreatedAt: t0, AcknowledgedAt: &acked},
	}}
	p := tel.Publisher(next, reader)

	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusPrepared, t0),
		{WorkspaceID: "w", Kind: forkengine.EventSessionUpserted, SessionID: "s"}})
	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusDispatching, t0.Add(time.Second))})
	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusProviderAccepted, t0.Add(1200*time.Millisecond))})
	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusCommitted, t0.Add(1500*time.Millisecond))})
	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusCommitted, t0.Add(time.Hour))}) // its acknowledgement
	// b froze before this instance saw it (a restart, another instance): read from the store.
	p.Publish([]forkengine.Event{forkEvent("b", forkengine.StatusFailed, t0.Add(20*time.Second))})
	// c is another instance's committed fork; this event is its acknowledgement.
	p.Publish([]forkengine.Event{forkEvent("c", forkengine.StatusCommitted, acked)})
	// d is resumed here after freezing elsewhere.
	p.Publish([]forkengine.Event{forkEvent("d", forkengine.StatusDispatching, t0)})
	p.Wait()

	if next.events != 9 {
		t.Fatalf("wrapped publisher got %d events, want all 9", next.events)
	}
	for status, want := range map[string]float64{"prepared": 1, "dispatching": 2, "provider_accepted": 1, "committed": 1, "failed": 1} {
		if got := testutil.ToFloat64(tel.Metrics.forkTransitions.WithLabelValues(status)); got != want {
			t.Errorf("transitions{%s} = %v, want %v", status, got, want)
		}
	}
	if n, sum := histogram(t, tel, "committed"); n != 1 || sum != 1.5 {
		t.Errorf("committed duration: %d samples, sum %v; want 1 of 1.5s (freeze to commit, acknowledgements aside)", n, sum)
	}
	if n, sum := histogram(t, tel, "failed"); n != 1 || sum != 30 {
		t.Errorf("failed duration: %d samples, sum %v; want 1 of 30s from the stored CreatedAt", n, sum)
	}
	if reader.reads != 2 {
		t.Errorf("store reads = %d, want 2 (b and c, the terminal events of forks not seen freezing)", reader.reads)
	}
}
