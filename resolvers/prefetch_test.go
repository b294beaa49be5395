package resolvers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/resolvers"
)

// batchGate is a BatchObserver that holds a loader's batch until another loader's batch has
// started (or a timeout passed, which it records): a batch held for one that only starts after
// it ends never sees it start.
type batchGate struct {
	mu       sync.Mutex
	armed    bool
	started  map[string]chan struct{}
	waitFor  map[string]string // loader -> the loader whose batch must start first
	timedOut []string
	loaders  []string // every batch of the armed phase, in order
}

func (g *batchGate) arm(waitFor map[string]string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed, g.waitFor, g.started, g.timedOut, g.loaders = true, waitFor, map[string]chan struct{}{}, nil, nil
}

func (g *batchGate) startedCh(loader string) chan struct{} {
	if g.started[loader] == nil {
		g.started[loader] = make(chan struct{})
	}
	return g.started[loader]
}

func (g *batchGate) observe(ctx context.Context, loader string, _ int) (context.Context, func(error)) {
	g.mu.Lock()
	if !g.armed {
		g.mu.Unlock()
		return ctx, func(error) {}
	}
	g.loaders = append(g.loaders, loader)
	if c := g.startedCh(loader); !slices.Contains(g.loaders[:len(g.loaders)-1], loader) {
		close(c)
	}
	var first chan struct{}
	if other, ok := g.waitFor[loader]; ok {
		first = g.startedCh(other)
	}
	g.mu.Unlock()
	if first != nil {
		select {
		case <-first:
		case <-time.After(3 * time.Second):
			g.mu.Lock()
			g.timedOut = append(g.timedOut, loader)
			g.mu.Unlock()
		}
	}
	return ctx, func(error) {}
}

// The list query's relations are read together, not one after another (prefetch.go): the
// lineages' batch is held until the latest turns' has started, and the forkability batch until
// the messages' has. Before the prefetch, rows asked for them in sequence (the lineage in line,
// then the latest turn; a turn's forkability, then its messages), so each held batch would have
// waited for one that starts only after it.
func TestPrefetchReadsAPageRelationsTogether(t *testing.T) {
	gate := &batchGate{}
	api := newTestAPI(t, apiOptions{engine: noBackground, limits: func(c *resolvers.Config) { c.Batch = gate.observe }})
	for i := range 5 {
		api.seedSession("w", fmt.Sprintf("s%03d", i), 1, "")
	}
	api.forkAndCommit("w", "s000", "s000-t1", "req-1")

	gate.arm(map[string]string{"forkedFrom": "latestTurn", "forkability": "turnMessages"})
	var page graphPage
	api.mustDo(graphQuery, &page, map[string]any{"ws": "w", "first": 50})
	require.Empty(t, gate.timedOut, "batches read one after another: %v", gate.loaders)

	requireGraphPage(t, page, 6)
	require.ElementsMatch(t, []string{"forkedFrom", "latestTurn", "forkability", "turnMessages"}, gate.loaders,
		"each relation one batch")
}

// A prefetch reads only what the selection asks for.
func TestPrefetchReadsOnlyTheSelection(t *testing.T) {
	gate := &batchGate{}
	api := newTestAPI(t, apiOptions{engine: noBackground, limits: func(c *resolvers.Config) { c.Batch = gate.observe }})
	for i := range 3 {
		api.seedSession("w", fmt.Sprintf("s%03d", i), 1, "")
	}
	api.forkAndCommit("w", "s000", "s000-t1", "req-1")
	for _, tc := range []struct {
		query string
		reads []string
	}{
		{`query { sessions(workspaceId: "w") { totalCount edges { node { id title } } } }`, nil},
		{`query { sessions(workspaceId: "w") { edges { node { latestTurn { id phase } } } } }`, []string{"latestTurn"}},
		{`query { sessions(workspaceId: "w") { edges { node { latestTurn { messages { content } } } } } }`,
			[]string{"latestTurn", "turnMessages"}},
		{`query { sessions(workspaceId: "w") { edges { node { forkedFrom { sourceSessionId } } } } }`, []string{"forkedFrom"}},
		{`query($skip: Boolean!) { sessions(workspaceId: "w") { edges { node { id latestTurn @skip(if: $skip) { id } } } } }`, nil},
	} {
		gate.arm(nil)
		var out map[string]any
		var vars map[string]any
		if strings.Contains(tc.query, "$skip") {
			vars = map[string]any{"skip": true}
		}
		api.mustDo(tc.query, &out, vars)
		// A prefetch may still be running when the response ends only if nobody waited for it,
		// which these selections never make.
		gate.mu.Lock()
		got := slices.Clone(gate.loaders)
		gate.mu.Unlock()
		require.ElementsMatch(t, tc.reads, got, tc.query)
	}
}
