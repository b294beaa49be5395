package adaptere2e

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestForkWhileAdapterDownIsRetryable: a fork requested while the adapter is down is the
// retryable PROVIDER_UNAVAILABLE (not FORK_UNSUPPORTED) and creates no operation; retried with the
// same request id once the adapter is back, it forks once.
func TestForkWhileAdapterDownIsRetryable(t *testing.T) {
	dir := t.TempDir()
	statePath := filepath.Join(dir, "adapter.json")
	adapter := start(t, "provider-adapter", adapterBin, "-addr", "127.0.0.1:0", "-state", statePath)
	server := start(t, "forkgraph", serverBin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "forkgraph.db"),
		"-no-seed", "-webhook-url", adapter.base)
	turn := reportForkableSession(t, server.base, "src")
	adapter.kill(t)

	errs := gql(t, server.base, forkMutation, forkInput("src", turn, "req-down"), nil)
	if len(errs) != 1 || errs[0].Extensions.Code != "PROVIDER_UNAVAILABLE" || !errs[0].Extensions.Retryable {
		t.Fatalf("fork while the adapter is down: errors %+v, want one PROVIDER_UNAVAILABLE with retryable: true", errs)
	}
	var list struct {
		ForkOperations struct{ TotalCount int }
	}
	mustGQL(t, server.base, `query($ws: ID!) { forkOperations(workspaceId: $ws) { totalCount } }`,
		map[string]any{"ws": workspace}, &list)
	if list.ForkOperations.TotalCount != 0 {
		t.Fatalf("%d operations after PROVIDER_UNAVAILABLE, want none", list.ForkOperations.TotalCount)
	}

	startAdapterOn(t, adapter.addr, "-state", statePath)
	var started struct{ ForkSession operation }
	mustGQL(t, server.base, forkMutation, forkInput("src", turn, "req-down"), &started)
	eventually(t, committedWithin, "the retried fork to commit", func() (bool, string) {
		got := readOperation(t, server.base, started.ForkSession.ID)
		return got.Status == "COMMITTED", fmt.Sprintf("%+v", got)
	})
	st := readAdapterState(t, statePath)
	if rec := st.Requests[workspace]["req-down"]; st.children("req-down") != 1 || rec.ForkDeliveries != 1 {
		t.Fatalf("adapter has %d children and %d deliveries for the retried request, want 1 and 1",
			st.children("req-down"), rec.ForkDeliveries)
	}
}
