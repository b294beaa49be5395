package forkenginetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func logTests() map[string]storeTest {
	return map[string]storeTest{
		"LogReadsEveryWorkspaceInCursorOrder": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			head, err := s.LogHead(ctx)
			require.NoError(t, err)
			require.Zero(t, head, "an empty log")
			for _, ws := range []string{wsA, wsB, wsA} {
				update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
					_, err := tx.AppendEvents(ctx, []forkengine.Event{newEvent(ws, forkengine.EventSessionUpserted, "s")})
					return err
				})
			}
			all, err := s.LogEventsAfter(ctx, 0, 0)
			require.NoError(t, err)
			require.Len(t, all, 3)
			require.Equal(t, []string{wsA, wsB, wsA}, []string{all[0].WorkspaceID, all[1].WorkspaceID, all[2].WorkspaceID})
			page, err := s.LogEventsAfter(ctx, all[0].Cursor, 1)
			require.NoError(t, err)
			require.Equal(t, []forkengine.Event{all[1]}, page)
			head, err = s.LogHead(ctx)
			require.NoError(t, err)
			require.Equal(t, all[2].Cursor, head)
		},
		// A reader that only ever asks for "after the last cursor I saw" misses nothing while
		// writers commit side by side: no event becomes visible behind one already read. With
		// cursors from a plain sequence, a writer holding a smaller number that commits later
		// is skipped for ever; this test then fails.
		"CursorOrderIsCommitOrder": func(t *testing.T, s forkengine.Store) {
			ctx := context.Background()
			const writers, perWriter = 6, 25
			var done atomic.Bool
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for i := range perWriter {
						err := s.Update(ctx, func(tx forkengine.Tx) error {
							ev := newEvent(wsA, forkengine.EventSessionUpserted, fmt.Sprintf("w%d-%d", w, i))
							if _, err := tx.AppendEvents(ctx, []forkengine.Event{ev}); err != nil {
								return err
							}
							// Work after the append keeps the cursor taken but uncommitted a while.
							time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
							return tx.UpsertSession(ctx, newSession(wsB, fmt.Sprintf("w%d-%d", w, i)))
						})
						require.NoError(t, err)
					}
				})
			}
			go func() { wg.Wait(); done.Store(true) }()
			var seen []int64
			var last int64
			for finished := false; !finished; {
				finished = done.Load() // read before the page, so the last page sees every commit
				page, err := s.LogEventsAfter(ctx, last, 0)
				require.NoError(t, err)
				for _, ev := range page {
					seen = append(seen, ev.Cursor)
					last = ev.Cursor
				}
			}
			all, err := s.LogEventsAfter(ctx, 0, 0)
			require.NoError(t, err)
			require.Len(t, all, writers*perWriter)
			want := make([]int64, len(all))
			for i, ev := range all {
				want[i] = ev.Cursor
			}
			require.Equal(t, want, seen, "the follower saw every event, each once, in cursor order")
		},
	}
}
