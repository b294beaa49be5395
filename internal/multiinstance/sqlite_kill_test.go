package multiinstance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestSQLiteKillDuringGroupedWritesLosesNoAcknowledgedWrite: writers side by side on one SQLite
// instance (session reports, and forks through their own sources) make its writes queue for the
// write lock and commit in groups; the instance is killed with SIGKILL in the middle of them.
// A new instance on the same file must hold every write a client was told succeeded, and every
// fork must end whole: committed with all its copied turns, or a delivery left unknown, never
// half-written.
func TestSQLiteKillDuringGroupedWritesLosesNoAcknowledgedWrite(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newSQLiteCluster(t)
	a := c.startWith("a", "-barrier=false")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const sources, turns = 4, 3
	for i := range sources {
		if err := client(a).ReportSource(ctx, workspace, fmt.Sprintf("src-%d", i), "simulated", "", turns); err != nil {
			t.Fatal(err)
		}
	}

	load, stopLoad := context.WithCancel(ctx)
	var (
		mu       sync.Mutex
		sessions []string // reports the instance answered without an error
		forks    []string // fork operations it answered with
		wg       sync.WaitGroup
	)
	for w := range 8 {
		wg.Go(func() {
			for n := 0; load.Err() == nil; n++ {
				id := fmt.Sprintf("w%d-%d", w, n)
				if client(a).ReportSession(load, workspace, id, "simulated", "") != nil {
					return
				}
				mu.Lock()
				sessions = append(sessions, id)
				mu.Unlock()
			}
		})
	}
	for s := range sources {
		wg.Go(func() {
			src := fmt.Sprintf("src-%d", s)
			for n := 0; load.Err() == nil; n++ {
				op, err := client(a).Fork(load, workspace, src, fmt.Sprintf("%s-t%d", src, turns), fmt.Sprintf("%s-fork-%d", src, n))
				if err != nil {
					return
				}
				mu.Lock()
				forks = append(forks, op.ID)
				mu.Unlock()
				if _, err := client(a).AwaitOperation(load, workspace, op.ID, 10*time.Second, Operation.Terminal); err != nil {
					return
				}
			}
		})
	}

	// Kill only once writes have been committed in groups, while they still are.
	deadline := time.Now().Add(30 * time.Second)
	for groupedWrites(t, a) < 20 {
		if time.Now().After(deadline) {
			stopLoad()
			wg.Wait()
			t.Fatalf("no writes were grouped in 30 s (%d reports, %d forks answered)", len(sessions), len(forks))
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	a.Kill()
	stopLoad()
	wg.Wait()
	if !a.Killed() {
		t.Fatal("the instance was not killed by SIGKILL")
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("killed after %d acknowledged reports and %d acknowledged forks", len(sessions), len(forks))

	b := c.startWith("b", "-barrier=false")
	for _, id := range sessions {
		var out struct{ Session *struct{ LocalID string } }
		err := client(b).Do(ctx, `query($w: ID!, $id: ID!) { session(workspaceId: $w, id: $id) { localId } }`,
			map[string]any{"w": workspace, "id": id}, &out)
		if err != nil {
			t.Fatal(err)
		}
		if out.Session == nil {
			t.Fatalf("session %s was reported successfully before the kill and is gone after it", id)
		}
	}
	for _, id := range forks {
		op, err := client(b).AwaitOperation(ctx, workspace, id, 30*time.Second, Operation.Terminal)
		if err != nil {
			t.Fatalf("fork %s after the restart: %v", id, err)
		}
		switch op.Status {
		case "COMMITTED":
			var out struct {
				Session *struct{ Turns struct{ TotalCount int } }
			}
			err := client(b).Do(ctx, `query($w: ID!, $id: ID!) { session(workspaceId: $w, id: $id) { turns { totalCount } } }`,
				map[string]any{"w": workspace, "id": op.TargetSessionID}, &out)
			if err != nil {
				t.Fatal(err)
			}
			if out.Session == nil || out.Session.Turns.TotalCount != turns {
				t.Fatalf("fork %s is committed, but its target %s is %+v, want %d copied turns", id, op.TargetSessionID, out.Session, turns)
			}
		case "UNKNOWN": // dispatching when killed: never dispatched again (SPEC §2.7)
		default:
			t.Fatalf("fork %s ended %s after the restart, want COMMITTED or UNKNOWN", id, op.Status)
		}
	}
}

var groupedWritesMetric = regexp.MustCompile(`(?m)^forkgraph_store_sqlite_grouped_writes_total (\S+)$`)

// groupedWrites reads the writes the instance has committed in groups from its metrics.
func groupedWrites(t *testing.T, in *Instance) int {
	t.Helper()
	resp, err := http.Get(in.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m := groupedWritesMetric.FindSubmatch(body)
	if m == nil {
		t.Fatal("the instance serves no forkgraph_store_sqlite_grouped_writes_total")
	}
	n, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}
