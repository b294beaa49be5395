package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
	"github.com/forkgraph/forkgraph/transports"
)

// BenchmarkDocumentLimits measures what refusing (or, below the limits, validating) the attack
// campaign's document shapes costs the server, against the document's size: one POST through
// the HTTP transport, the document limits, gqlgen's parser and validator. MB/s is document bytes
// per second, so a flat MB/s across sizes is linear time. Run:
//
//	go test ./resolvers -run '^$' -bench DocumentLimits -benchtime 20x
func BenchmarkDocumentLimits(b *testing.B) {
	h := newBenchServer(b)
	shapes := []struct {
		name  string
		build func(int) string
		sizes []int
	}{
		{"fragment-bomb", sessionFragmentBomb, []int{8, 20, 30, 80}},
		{"root-fragment-bomb", fragmentBomb, []int{8, 20, 30, 80}},
		{"aliases", aliasFlood, []int{100, 1000, 10_000, 50_000}},
		{"same-name", sameNameFlood, []int{1000, 10_000, 90_000}},
		{"introspections", introspectionFlood, []int{5, 100, 3000}},
		{"directives", directiveFlood, []int{50, 1000, 50_000}},
		{"nested-same-name", nestedSameName, []int{141, 1000, 1998}},
		{"fragment-same-name", nestedFragmentsSameName, []int{70, 600, 999}},
		{"many-fragments", manyFragments, []int{80, 1000}},
	}
	for _, shape := range shapes {
		for _, n := range shape.sizes {
			body, err := json.Marshal(map[string]string{"query": shape.build(n)})
			if err != nil {
				b.Fatal(err)
			}
			if len(body) > transports.DefaultMaxBodyBytes {
				continue
			}
			b.Run(fmt.Sprintf("%s/n=%d/bytes=%d", shape.name, n, len(body)), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
					req.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
		}
	}
}

func newBenchServer(b *testing.B) http.Handler {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "bench.db"), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	broker := forkengine.NewBroker(0)
	engine, err := forkengine.New(forkengine.Config{Store: db, Publisher: broker, Logger: quiet,
		Drivers: map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = engine.Close(ctx); _ = db.Close() })
	srv := resolvers.NewServer(resolvers.Config{Engine: engine, Broker: broker, Logger: quiet})
	srv.AddTransport(transports.HTTP{})
	return srv
}
