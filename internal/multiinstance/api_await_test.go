package multiinstance

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestAwaitOperationEndsWhenItsContextDoes: a caller that stops its load (a done ctx) is not
// kept until the limit. TestSQLiteKillDuringGroupedWritesLosesNoAcknowledgedWrite's fork writers
// waited out their 10 s limit after the kill before this.
func TestAwaitOperationEndsWhenItsContextDoes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":{"forkOperation":{"id":"op","status":"DISPATCHING"}}}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := NewClient(srv.URL).AwaitOperation(ctx, "w", "op", time.Minute, Operation.Terminal)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("AwaitOperation after its ctx was cancelled: %v, want context.Canceled", err)
	}
	if waited := time.Since(start); waited > 30*time.Second {
		t.Fatalf("AwaitOperation returned %s after its ctx was cancelled at 100 ms, want before its 1 min limit", waited)
	}
}
