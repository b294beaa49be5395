package server_test

import (
	"os"
	"testing"

	"github.com/forkgraph/forkgraph/internal/testparallel"
)

// TestMain runs four parallel tests per core: most of them wait on a server (a lease, a
// reconcile delay, a stream's close), so the default, one per core, left the cores idle while
// the package queued behind two waits. The tests that must not share the machine stay serial.
func TestMain(m *testing.M) {
	testparallel.PerCore(4)
	os.Exit(m.Run())
}
