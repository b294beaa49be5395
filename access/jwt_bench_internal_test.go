package access

import (
	"context"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/internal/benchclock"
	"github.com/forkgraph/forkgraph/internal/testissuer"
)

// BenchmarkJWTVerification is the cost of one JWT at the edge with the issuer's keys cached:
// "signature" verifies a token never seen (the first request with it: parse, signature, claims,
// claim mapping), "remembered" a token already verified (every later request: its SHA-256 and a
// map lookup). docs/BENCHMARKS.md sets both against a small query's CPU
// (resolvers.BenchmarkSmallQuery).
func BenchmarkJWTVerification(b *testing.B) {
	iss := testissuer.New(b)
	v, err := NewJWTVerifier(JWTConfig{Issuer: iss.URL(), Audience: testissuer.Audience})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, kid := range []string{"rsa-1", "ec-1", "ed-1"} {
		token := iss.Mint(kid, testissuer.Claims{Subject: "bench", Scope: "read fork", Workspaces: []string{"demo", "other"}})
		if _, err := v.Verify(ctx, token); err != nil { // fetches the keys once
			b.Fatal(err)
		}
		alg := string(iss.Key(kid).Algorithm)
		b.Run(alg+"/signature", func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := benchclock.ProcessCPU(b)
			for b.Loop() {
				if _, _, err := v.verifySigned(ctx, token, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(benchclock.ProcessCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-µs/op")
		})
		b.Run(alg+"/remembered", func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := benchclock.ProcessCPU(b)
			for b.Loop() {
				if _, err := v.Verify(ctx, token); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(benchclock.ProcessCPU(b)-cpu0)/float64(b.N)/1e3, "cpu-µs/op")
		})
	}
}
