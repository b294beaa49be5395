package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// BenchmarkSearchTwoCommonWords is the worst case of a search of several words: 20,000
// sessions, "half" in every second title and "odd" in the others, so "half odd" matches none
// and an unbounded read walks 10,000 rows of the lead word for a page and again for its count.
// Bounded is what the API does (SearchSessions and CountSearch at forkengine.SearchScanRows);
// Unbounded is ListSessions and CountSessions, the walk the API did before the bound.
//
//	go test ./store -run '^$' -bench SearchTwoCommonWords -benchtime 50x -count 3
func BenchmarkSearchTwoCommonWords(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, sqliteConfig(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	const ws, sessions, perTx = "bench", 20_000, 1_000
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for start := 0; start < sessions; start += perTx {
		err := db.Update(ctx, func(tx forkengine.Tx) error {
			for i := start; i < start+perTx; i++ {
				word := "odd"
				if i%2 == 0 {
					word = "half"
				}
				s := forkengine.Session{WorkspaceID: ws, ID: fmt.Sprintf("s%06d", i), Kind: forkengine.SessionRoot,
					Provider: "simulated", Title: fmt.Sprintf("Session %d %s", i, word), Visible: true,
					CreatedAt: epoch.Add(time.Duration(i) * time.Millisecond), UpdatedAt: epoch}
				if err := tx.UpsertSession(ctx, s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	terms, err := forkengine.ParseSearch("half odd")
	if err != nil {
		b.Fatal(err)
	}
	f := forkengine.SessionFilter{Search: terms}
	b.Run("Bounded", func(b *testing.B) {
		for b.Loop() {
			page, err := db.SearchSessions(ctx, ws, f, forkengine.PageCursor{}, 51, forkengine.SearchScanRows, false)
			if err != nil || len(page.Sessions) != 0 || page.Reached.IsZero() {
				b.Fatalf("page %+v, %v", page, err)
			}
			c, err := db.CountSearch(ctx, ws, f, forkengine.SearchScanRows)
			if err != nil || c != (forkengine.SearchCount{LowerBound: true}) {
				b.Fatalf("count %+v, %v", c, err)
			}
		}
	})
	b.Run("Unbounded", func(b *testing.B) {
		for b.Loop() {
			rows, err := db.ListSessions(ctx, ws, f, forkengine.PageCursor{}, 51)
			if err != nil || len(rows) != 0 {
				b.Fatalf("page %d, %v", len(rows), err)
			}
			if n, err := db.CountSessions(ctx, ws, f); err != nil || n != 0 {
				b.Fatalf("count %d, %v", n, err)
			}
		}
	})
}
