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
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
	"github.com/forkgraph/forkgraph/transports"
)

// refusalBound is the most a refused document may cost on average in BenchmarkDocumentLimits.
// Refusals measured 1-40 ms on two shared cores, most of it decoding the 1 MiB JSON body; the
// bound is there to catch a return to expansion, which cost seconds to minutes.
const refusalBound = 100 * time.Millisecond

// BenchmarkDocumentLimits measures what refusing (or, below the limits, validating) the attack
// campaign's document shapes costs the server, against the document's size: one POST through
// the HTTP transport, the document limits, gqlgen's parser and validator. MB/s is document bytes
// per second, so a flat MB/s across sizes is linear time. Each shape asserts the code it is
// answered with (none: it runs) and a refusal's cost stays under refusalBound. Run:
//
//	go test ./resolvers -run '^$' -bench DocumentLimits -benchtime 20x
func BenchmarkDocumentLimits(b *testing.B) {
	h := newBenchServer(b)
	const complexity = resolvers.CodeComplexityLimit
	// Each shape at each size with the code it is answered with ("": it runs).
	cases := []struct {
		shape string
		build func(int) string
		n     int
		code  string
	}{
		{"fragment-bomb", sessionFragmentBomb, 8, complexity}, // overlap_limit: __typename 2^8 times
		{"fragment-bomb", sessionFragmentBomb, 20, complexity},
		{"fragment-bomb", sessionFragmentBomb, 30, complexity},
		{"fragment-bomb", sessionFragmentBomb, 80, complexity},
		{"root-fragment-bomb", fragmentBomb, 8, resolvers.CodeRootFieldLimit},
		{"root-fragment-bomb", fragmentBomb, 30, complexity},
		{"root-fragment-bomb", fragmentBomb, 80, complexity},
		{"aliases", aliasFlood, 100, ""},
		{"aliases", aliasFlood, 1000, resolvers.CodeAliasLimit},
		{"aliases", aliasFlood, 50_000, resolvers.CodeTokenLimit},
		{"same-name", sameNameFlood, 1000, resolvers.CodeRootFieldLimit},
		{"same-name", sameNameFlood, 90_000, resolvers.CodeTokenLimit},
		{"introspections", introspectionFlood, 5, ""},
		{"introspections", introspectionFlood, 100, resolvers.CodeRootFieldLimit},
		{"introspections", introspectionFlood, 3000, resolvers.CodeTokenLimit},
		{"directives", directiveFlood, 50, "GRAPHQL_VALIDATION_FAILED"}, // @include is not repeatable
		{"directives", directiveFlood, 1000, resolvers.CodeDirectiveLimit},
		{"directives", directiveFlood, 50_000, resolvers.CodeTokenLimit},
		{"nested-same-name", nestedSameName, 141, ""},
		{"nested-same-name", nestedSameName, 1998, complexity},
		{"fragment-same-name", nestedFragmentsSameName, 70, ""},
		{"fragment-same-name", nestedFragmentsSameName, 600, complexity},
		{"many-fragments", manyFragments, 80, ""},
		{"many-fragments", manyFragments, 200, complexity},
	}
	for _, tc := range cases {
		body, err := json.Marshal(map[string]string{"query": tc.build(tc.n)})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s/n=%d/bytes=%d", tc.shape, tc.n, len(body)), func(b *testing.B) {
			if len(body) > transports.DefaultMaxBodyBytes {
				b.Fatalf("%d bytes is over the body limit", len(body))
			}
			if got := postCode(b, h, body); got != tc.code {
				b.Fatalf("answered with code %q, want %q", got, tc.code)
			}
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				postCode(b, h, body)
			}
			if perOp := b.Elapsed() / time.Duration(b.N); tc.code != "" && perOp > refusalBound {
				b.Errorf("refusing took %s a document, more than %s", perOp, refusalBound)
			}
		})
	}
}

// postCode posts body and returns the first error's code ("" without errors).
func postCode(b *testing.B, h http.Handler, body []byte) string {
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var resp struct {
		Errors []struct{ Extensions map[string]any }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		b.Fatal(err)
	}
	if len(resp.Errors) == 0 {
		return ""
	}
	code, _ := resp.Errors[0].Extensions["code"].(string)
	return code
}

func newBenchServer(b *testing.B) http.Handler {
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "bench.db"), Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	engine, err := forkengine.New(forkengine.Config{Store: db, Logger: quiet,
		Drivers: map[string]forkengine.Driver{"simulated": simulated.New(simulated.Options{})}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = engine.Close(ctx); _ = db.Close() })
	srv := resolvers.NewServer(resolvers.Config{Engine: engine, Logger: quiet})
	srv.AddTransport(transports.HTTP{})
	return srv
}
