package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/store"
)

const page = 50

// query is one timed read; it fails when the store's answer is not the one the dataset implies,
// so a fast wrong answer cannot pass as a figure.
type query struct {
	name string
	call func(ctx context.Context) error
}

func queries(db *store.DB) []query {
	all := forkengine.SessionFilter{}
	late := cursorOf(sessionCount - 100)
	aroundBig := cursorOf(bigIndex - 20)
	big := sessionID(bigIndex)
	pageIDs := func(ctx context.Context) ([]string, error) {
		rows, err := db.ListSessions(ctx, workspace, all, aroundBig, page+1)
		if err != nil {
			return nil, err
		}
		ids := make([]string, 0, page)
		for _, s := range rows[:page] {
			ids = append(ids, s.ID)
		}
		if !slices.Contains(ids, big) {
			return nil, fmt.Errorf("the page after %v lacks %s", aroundBig, big)
		}
		return ids, nil
	}
	return []query{
		{"sessions first page", func(ctx context.Context) error {
			rows, err := db.ListSessions(ctx, workspace, all, forkengine.PageCursor{}, page+1)
			return expect(err, len(rows), page+1)
		}},
		{"sessions after a cursor near the end", func(ctx context.Context) error {
			rows, err := db.ListSessions(ctx, workspace, all, late, page+1)
			return expect(err, len(rows), page+1)
		}},
		{"sessions { totalCount }", func(ctx context.Context) error {
			n, err := db.CountSessions(ctx, workspace, all)
			return expect(err, n, sessionCount-sessionCount/deletedEvery)
		}},
		{"session(big) { turns } first page", func(ctx context.Context) error {
			m, err := db.TurnsBySessionIDs(ctx, workspace, []string{big}, 0, page+1)
			return expect(err, len(m[big]), page+1)
		}},
		{"session(big) { turns { totalCount } }", func(ctx context.Context) error {
			m, err := db.CountTurnsBySessionIDs(ctx, workspace, []string{big})
			return expect(err, m[big], bigTurns)
		}},
		{"sessions { turns { totalCount } } on big's page", func(ctx context.Context) error {
			ids, err := pageIDs(ctx)
			if err != nil {
				return err
			}
			m, err := db.CountTurnsBySessionIDs(ctx, workspace, ids)
			if err == nil && m[big] != bigTurns {
				return fmt.Errorf("big counts %d turns", m[big])
			}
			return expect(err, len(m), page)
		}},
		{"sessions { latestTurn } on big's page", func(ctx context.Context) error {
			ids, err := pageIDs(ctx)
			if err != nil {
				return err
			}
			m, err := db.LatestTurnsBySessionIDs(ctx, workspace, ids)
			if err == nil && m[big].Sequence != bigTurns {
				return fmt.Errorf("latest turn of big is %d", m[big].Sequence)
			}
			return expect(err, len(m), page)
		}},
		{"sessions { activeTurn } on big's page", func(ctx context.Context) error {
			ids, err := pageIDs(ctx)
			if err != nil {
				return err
			}
			m, err := db.ActiveTurnsBySessionIDs(ctx, workspace, ids)
			return expect(err, len(m), page-1) // every session but big has a running last turn
		}},
	}
}

// cursorOf is the cursor of the session at index i: the next page starts at i+1.
func cursorOf(i int) forkengine.PageCursor {
	s := sessionAt(i)
	return forkengine.PageCursor{Time: s.CreatedAt, ID: s.ID}
}

func expect(err error, got, want int) error {
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("got %d rows, want %d", got, want)
	}
	return nil
}

// report runs each query a few times untimed, then iterations times timed, and prints p50, p99
// and max per query.
func report(ctx context.Context, db *store.DB, iterations int, out io.Writer) error {
	fmt.Fprintf(out, "| query | p50 | p99 | max |\n|---|---|---|---|\n")
	for _, q := range queries(db) {
		for range 5 {
			if err := q.call(ctx); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
		}
		took := make([]time.Duration, iterations)
		for i := range took {
			start := time.Now()
			if err := q.call(ctx); err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			took[i] = time.Since(start)
		}
		slices.Sort(took)
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", q.name, ms(took[len(took)/2]),
			ms(took[min(len(took)-1, len(took)*99/100)]), ms(took[len(took)-1]))
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
