package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/forkgraph/forkgraph/forkengine"
)

// frozenReader answers GetOperation with an operation frozen at a fixed time.
type frozenReader struct {
	forkengine.Reader
	createdAt time.Time
	reads     int
}

func (r *frozenReader) GetOperation(_ context.Context, ws, id string) (forkengine.ForkOperation, error) {
	r.reads++
	return forkengine.ForkOperation{WorkspaceID: ws, ID: id, CreatedAt: r.createdAt}, nil
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
	reader := &frozenReader{createdAt: t0.Add(-10 * time.Second)}
	p := tel.Publisher(next, reader)

	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusPrepared, t0),
		{WorkspaceID: "w", Kind: forkengine.EventSessionUpserted, SessionID: "s"}})
	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusDispatching, t0.Add(time.Second))})
	p.Publish([]forkengine.Event{forkEvent("a", forkengine.StatusCommitted, t0.Add(1500*time.Millisecond))})
	// b froze before this instance saw it (a restart, another instance): read from the store.
	p.Publish([]forkengine.Event{forkEvent("b", forkengine.StatusFailed, t0.Add(20*time.Second))})
	p.Wait()

	if next.events != 5 {
		t.Fatalf("wrapped publisher got %d events, want all 5", next.events)
	}
	for status, want := range map[string]float64{"prepared": 1, "dispatching": 1, "committed": 1, "failed": 1} {
		if got := testutil.ToFloat64(tel.Metrics.forkTransitions.WithLabelValues(status)); got != want {
			t.Errorf("transitions{%s} = %v, want %v", status, got, want)
		}
	}
	if n, sum := histogram(t, tel, "committed"); n != 1 || sum != 1.5 {
		t.Errorf("committed duration: %d samples, sum %v; want 1 of 1.5s (freeze to commit)", n, sum)
	}
	if n, sum := histogram(t, tel, "failed"); n != 1 || sum != 30 {
		t.Errorf("failed duration: %d samples, sum %v; want 1 of 30s from the stored CreatedAt", n, sum)
	}
	if reader.reads != 1 {
		t.Errorf("store reads = %d, want 1 (only for the fork not seen freezing)", reader.reads)
	}
}
