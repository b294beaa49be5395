package multiinstance

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// TestInstancesStartTogether: three instances started at the same moment on an empty schema all
// come up (migrations run under a lock, once), and a session reported through one is read
// through each of the others.
func TestInstancesStartTogether(t *testing.T) {
	t.Parallel() // its own database (schema or file), adapter and processes
	c := newPostgresCluster(t)
	names := []string{"a", "b", "c"}
	ins := make([]*Instance, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ins[i], errs[i] = Start(context.Background(), c.options(name))
		}()
	}
	wg.Wait()
	for i, in := range ins {
		if in != nil {
			c.byName[names[i]] = in
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("instance %s: %v", names[i], err)
		}
	}
	first := 0
	for _, in := range ins {
		first += strings.Count(in.Log(), `msg="store: applied migration" version=1 `)
	}
	if first != 1 {
		t.Errorf("the first migration was applied %d times over three instances, want once", first)
	}
	ctx := context.Background()
	if err := client(ins[0]).ReportSession(ctx, workspace, "together", "simulated", ""); err != nil {
		t.Fatal(err)
	}
	for _, in := range ins[1:] {
		var out struct{ Session *struct{ ID string } }
		err := client(in).Do(ctx, `query($w: ID!) { session(workspaceId: $w, id: "together") { id } }`,
			map[string]any{"w": workspace}, &out)
		if err != nil || out.Session == nil {
			t.Errorf("instance %s does not read the session written through a: %+v (%v)", in.Name, out.Session, err)
		}
	}
	if t.Failed() {
		for _, in := range ins {
			t.Logf("--- log of %s ---\n%s", in.Name, in.Log())
		}
	}
}
