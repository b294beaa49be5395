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
	"github.com/forkgraph/forkgraph/limits"
	"github.com/forkgraph/forkgraph/limits/limitstest"
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
	const complexity = limits.CodeComplexityLimit
	// Each shape at each size with the code it is answered with ("": it runs).
	cases := []struct {
		shape string
		build func(int) string
		n     int
		code  string
	}{
		{"fragment-bomb", limitstest.SessionFragmentBomb, 8, complexity}, // overlap_limit: __typename 2^8 times
		{"fragment-bomb", limitstest.SessionFragmentBomb, 20, complexity},
		{"fragment-bomb", limitstest.SessionFragmentBomb, 30, complexity},
		{"fragment-bomb", limitstest.SessionFragmentBomb, 80, complexity},
		{"root-fragment-bomb", limitstest.FragmentBomb, 8, limits.CodeRootFieldLimit},
		{"root-fragment-bomb", limitstest.FragmentBomb, 30, complexity},
		{"root-fragment-bomb", limitstest.FragmentBomb, 80, complexity},
		{"aliases", limitstest.AliasFlood, 100, ""},
		{"aliases", limitstest.AliasFlood, 1000, limits.CodeAliasLimit},
		{"aliases", limitstest.AliasFlood, 50_000, limits.CodeTokenLimit},
		{"same-name", limitstest.SameNameFlood, 1000, limits.CodeRootFieldLimit},
		{"same-name", limitstest.SameNameFlood, 90_000, limits.CodeTokenLimit},
		{"introspections", limitstest.IntrospectionFlood, 5, ""},
		{"introspections", limitstest.IntrospectionFlood, 100, limits.CodeRootFieldLimit},
		{"introspections", limitstest.IntrospectionFlood, 3000, limits.CodeTokenLimit},
		{"directives", limitstest.DirectiveFlood, 50, "GRAPHQL_VALIDATION_FAILED"}, // @include is not repeatable
		{"directives", limitstest.DirectiveFlood, 1000, limits.CodeDirectiveLimit},
		{"directives", limitstest.DirectiveFlood, 50_000, limits.CodeTokenLimit},
		{"limitstest.Nested-same-name", limitstest.NestedSameName, 141, ""},
		{"limitstest.Nested-same-name", limitstest.NestedSameName, 1998, complexity},
		{"fragment-same-name", limitstest.NestedFragmentsSameName, 70, ""},
		{"fragment-same-name", limitstest.NestedFragmentsSameName, 600, complexity},
		{"many-fragments", limitstest.ManyFragments, 80, ""},
		{"many-fragments", limitstest.ManyFragments, 200, complexity},
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
	return newBenchServerOn(b, store.Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "bench.db"), Logger: quiet})
}

// newBenchServerOn is newBenchServer on the store cfg opens.
func newBenchServerOn(b *testing.B, cfg store.Config) http.Handler {
	ctx := context.Background()
	db, err := store.Open(ctx, cfg)
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
