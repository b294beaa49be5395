package resolvers_test

import (
	"context"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/resolvers"
)

// batchLog records what Config.Batch is told.
type batchLog struct {
	mu    sync.Mutex
	sizes map[string][]int
	ended int
}

func (b *batchLog) observe(ctx context.Context, loader string, keys int) (context.Context, func(error)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sizes[loader] = append(b.sizes[loader], keys)
	return ctx, func(error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.ended++
	}
}

// outermost records the errors of every response as the client receives them.
type outermost struct {
	mu    sync.Mutex
	codes []string
}

func (*outermost) ExtensionName() string                   { return "outermost" }
func (*outermost) Validate(graphql.ExecutableSchema) error { return nil }
func (o *outermost) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp != nil {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, e := range resp.Errors {
			code, _ := e.Extensions["code"].(string)
			o.codes = append(o.codes, code)
		}
	}
	return resp
}

func TestBatchObserverSeesEveryLoaderBatch(t *testing.T) {
	t.Parallel()
	log := &batchLog{sizes: map[string][]int{}}
	ext := &outermost{}
	api := newTestAPI(t, apiOptions{engine: noBackground, limits: func(c *resolvers.Config) {
		c.Batch = log.observe
		c.Extensions = []graphql.HandlerExtension{ext}
	}})
	for _, id := range []string{"a", "b", "c"} {
		api.seedSession("w", id, 1, "")
	}
	var page graphPage
	api.mustDo(graphQuery, &page, map[string]any{"ws": "w", "first": 10})
	require.Len(t, page.Sessions.Edges, 3)

	log.mu.Lock()
	require.Equal(t, []int{3}, log.sizes["latestTurn"], "one batch for the three sessions' latest turns")
	require.Equal(t, []int{3}, log.sizes["forkability"], "one probe batch for the three turns")
	total := 0
	for _, sizes := range log.sizes {
		total += len(sizes)
	}
	require.Equal(t, total, log.ended, "every batch that started ended")
	log.mu.Unlock()

	api.expectCode("NOT_FOUND", `mutation { deleteSession(workspaceId: "w", id: "missing") }`, nil)
	ext.mu.Lock()
	defer ext.mu.Unlock()
	require.Contains(t, ext.codes, "NOT_FOUND", "the extension sees the presented error")
}
