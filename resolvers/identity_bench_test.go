package resolvers_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/internal/benchclock"
	"github.com/forkgraph/forkgraph/internal/testissuer"
	"github.com/forkgraph/forkgraph/providers/simulated"
	"github.com/forkgraph/forkgraph/resolvers"
	"github.com/forkgraph/forkgraph/store"
	"github.com/forkgraph/forkgraph/transports"
)

// smallQuery is the smallest read a frontend makes: one session by id.
const smallQuery = `{ session(workspaceId: "demo", id: "s") { id title } }`

// BenchmarkSmallQuery runs smallQuery in process over SQLite, through the authentication
// middleware and the field policy, as open mode, with a static token, and with a JWT whose
// verification is remembered (what every request after a token's first costs). The JWT's first
// verification is access.BenchmarkJWTVerification's "signature"; docs/BENCHMARKS.md sets both
// against this benchmark's open-mode CPU:
//
//	go test ./resolvers -run '^$' -bench SmallQuery -benchmem
//	go test ./access -run '^$' -bench JWTVerification -benchmem
func BenchmarkSmallQuery(b *testing.B) {
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
	title := "A session"
	if _, err := engine.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "demo", ID: "s", Provider: "simulated", Title: &title}); err != nil {
		b.Fatal(err)
	}
	iss := testissuer.New(b)
	verifier, err := access.NewJWTVerifier(access.JWTConfig{Issuer: iss.URL(), Audience: testissuer.Audience})
	if err != nil {
		b.Fatal(err)
	}
	tokens, err := access.ParseTokens(tokA + "=demo")
	if err != nil {
		b.Fatal(err)
	}
	auth := access.NewAuthenticator(access.AuthConfig{Tokens: tokens, JWT: verifier})
	server := func(identify resolvers.Identify) *http.ServeMux {
		srv := resolvers.NewServer(resolvers.Config{Engine: engine, Logger: quiet, Identify: identify})
		srv.AddTransport(transports.HTTP{})
		mux := http.NewServeMux()
		if identify == nil {
			mux.Handle("/", srv)
		} else {
			mux.Handle("/", auth.HTTPMiddleware(srv))
		}
		return mux
	}
	open, authed := server(nil), server(auth.Identify)
	body := benchBody(b, smallQuery, nil)
	jwt := iss.Mint("ec-1", testissuer.Claims{Subject: "bench", Scope: "read"})
	for _, tc := range []struct {
		name          string
		h             http.Handler
		authorization string
	}{{"open", open, ""}, {"static token", authed, "Bearer " + tokA}, {"JWT remembered", authed, "Bearer " + jwt}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := benchclock.ProcessCPU(b)
			for b.Loop() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if tc.authorization != "" {
					req.Header.Set("Authorization", tc.authorization)
				}
				tc.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
					b.Fatalf("HTTP %d: %.300s", rec.Code, rec.Body.String())
				}
			}
			b.ReportMetric(float64(benchclock.ProcessCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}
