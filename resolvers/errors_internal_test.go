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
	var logs bytes.Buffer
	present := presentError(slog.New(slog.NewTextHandler(&logs, nil)), func(context.Context) string { return "r1" })
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
