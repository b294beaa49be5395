package adaptere2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/internal/await"
)

// TestForkWhileAdapterDownIsRetryable: a fork requested while the adapter is down is the
// retryable PROVIDER_UNAVAILABLE (not FORK_UNSUPPORTED) and creates no operation; retried with the
// same request id once the adapter is back, it forks once.
func TestForkWhileAdapterDownIsRetryable(t *testing.T) {
	t.Parallel()
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
	await.State(t, committedWithin, "the retried fork to commit", func() (bool, string) {
		got := readOperation(t, server.base, started.ForkSession.ID)
		return got.Status == "COMMITTED", fmt.Sprintf("%+v", got)
	})
	st := readAdapterState(t, statePath)
	if rec := st.Requests[workspace]["req-down"]; st.children("req-down") != 1 || rec.ForkDeliveries != 1 {
		t.Fatalf("adapter has %d children and %d deliveries for the retried request, want 1 and 1",
			st.children("req-down"), rec.ForkDeliveries)
	}
}

// TestAdapterDownNamesNoAddress: issue 21's leak. The webhook URL carries a user name and a
// password; a fork is in flight when the adapter is killed, so it becomes DELIVERY_UNKNOWN, and
// it is reconciled while the adapter is still down. Every client of the workspace reads the
// operation's error: it says the adapter could not be reached, never its URL, user name,
// password, host, port or path. The server's log has those details, with the operation id.
func TestAdapterDownNamesNoAddress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	adapter := start(t, "provider-adapter", adapterBin, "-addr", "127.0.0.1:0", "-state", filepath.Join(dir, "adapter.json"),
		"-fork-delay", "10m")
	host, port, _ := strings.Cut(adapter.addr, ":")
	server := start(t, "forkgraph", serverBin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "forkgraph.db"),
		"-no-seed", "-webhook-url", "http://admin:s3cret@"+adapter.addr, "-webhook-timeout", "10m")
	turn := reportForkableSession(t, server.base, "src")
	var started struct{ ForkSession operation }
	mustGQL(t, server.base, forkMutation, forkInput("src", turn, "req-leak"), &started)
	id := started.ForkSession.ID
	await.State(t, receivedWithin, "the fork to be in flight", func() (bool, string) {
		got := readOperation(t, server.base, id)
		return got.Phase == "DISPATCHING", fmt.Sprintf("%+v", got)
	})
	adapter.kill(t)
	await.State(t, unknownWithin, "the fork to become DELIVERY_UNKNOWN", func() (bool, string) {
		got := readOperation(t, server.base, id)
		return got.Status == "UNKNOWN", fmt.Sprintf("%+v", got)
	})
	got := reconcileNow(t, server.base, id, "UNKNOWN")
	await.State(t, receivedWithin, "an attempt while the adapter is down", func() (bool, string) {
		got = reconcileFields(t, server.base, id)
		return got.ReconcileAttempts > 0, fmt.Sprintf("%+v", got)
	})
	read := readOperation(t, server.base, id)
	if read.Error == "" {
		t.Fatalf("operation %+v has no error text", read)
	}
	for _, leak := range []string{"admin", "s3cret", host, port, "http", "dial", "/describe", "/reconcile"} {
		if strings.Contains(read.Error, leak) {
			t.Fatalf("ForkOperation.error %q names %q of the adapter's URL", read.Error, leak)
		}
	}
	local := id[strings.LastIndex(id, ":")+1:] // the log names operations by their local id
	if log := server.stderr.String(); !strings.Contains(log, "operation="+local) || !strings.Contains(log, adapter.addr) {
		t.Fatalf("the server log names neither the operation nor the adapter's address:\n%s", log)
	}
}
