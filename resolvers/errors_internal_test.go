package resolvers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Issue 12: a client that left a @defer query made the server log "internal error … context
// canceled" for every resolver still running. A cancellation is not the server's fault: it is
// not logged as an internal error; other errors still are.
func TestCancelledOperationsAreNotLoggedAsInternalErrors(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	present := presentError(slog.New(slog.NewTextHandler(&logs, nil)), func(context.Context) string { return "r1" }, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range []error{context.Canceled, fmt.Errorf("load turns: %w", context.Canceled)} {
		if got := present(ctx, err); got.Extensions["code"] != "INTERNAL_SERVER_ERROR" {
			t.Fatalf("presented %v as %+v", err, got)
		}
	}
	if strings.Contains(logs.String(), "internal error") {
		t.Fatalf("a cancellation was logged as an internal error:\n%s", logs.String())
	}
	present(context.Background(), errors.New("disk on fire"))
	if !strings.Contains(logs.String(), "internal error") || !strings.Contains(logs.String(), "disk on fire") {
		t.Fatalf("a real failure was not logged:\n%s", logs.String())
	}
}

// An error the store says means the database could not be reached is the retryable UNAVAILABLE,
// with a fixed message; its cause goes to the log with the request id. Any other error is still
// INTERNAL_SERVER_ERROR, and a domain error keeps its code.
func TestUnavailableDatabaseIsRetryable(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	outage := errors.New(`failed to connect to "user=forkgraph database=prod": dial tcp 10.0.0.5:5432: connection refused`)
	present := presentError(slog.New(slog.NewTextHandler(&logs, nil)), func(context.Context) string { return "r1" },
		func(err error) bool { return errors.Is(err, outage) })
	got := present(context.Background(), fmt.Errorf("start fork r: read operation: %w", outage))
	if got.Extensions["code"] != "UNAVAILABLE" || got.Extensions["retryable"] != true || got.Message != "the database is unavailable; try again" {
		t.Fatalf("an outage presented as %+v", got)
	}
	if !strings.Contains(logs.String(), "database unavailable") || !strings.Contains(logs.String(), "10.0.0.5") ||
		!strings.Contains(logs.String(), "r1") {
		t.Fatalf("the outage's cause was not logged with the request id:\n%s", logs.String())
	}
	if got := present(context.Background(), errors.New("disk on fire")); got.Extensions["code"] != "INTERNAL_SERVER_ERROR" {
		t.Fatalf("another error presented as %+v", got)
	}
}
