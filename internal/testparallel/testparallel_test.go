package testparallel

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	PerCore(3)
	os.Exit(m.Run())
}

// With PerCore(3), three parallel tests per core are running at one time (unless the command
// line gave -parallel, which PerCore leaves alone).
func TestThreeParallelTestsPerCoreRunAtOnce(t *testing.T) {
	n := 3 * runtime.GOMAXPROCS(0)
	if got := flag.Lookup("test.parallel").Value.String(); got != strconv.Itoa(n) {
		t.Skipf("-test.parallel is %s: the command line set it", got)
	}
	var mu sync.Mutex
	running, most := 0, 0
	all := make(chan struct{})
	t.Run("group", func(t *testing.T) {
		for range n {
			t.Run("wait", func(t *testing.T) {
				t.Parallel()
				mu.Lock()
				running++
				most = max(most, running)
				if running == n {
					close(all)
				}
				mu.Unlock()
				select {
				case <-all:
				case <-time.After(10 * time.Second):
					t.Errorf("the %d tests were not all running at once within 10 s", n)
				}
			})
		}
	})
	if most != n {
		t.Fatalf("at most %d of %d parallel tests ran at once, want all", most, n)
	}
}
