package forkenginetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The paged reads of forkengine.PageReader must agree with the unpaged reads they page, at any
// depth of shared history, in both directions, for every page size, one owner or a batch.

func pageTests() map[string]storeTest {
	return map[string]storeTest{
		"TranscriptPagesAgreeWithTheWholeTranscript": testTranscriptPages,
		"TurnMessagePagesAgreeWithTheTurn":           testTurnMessagePages,
		"ForkPagesAgreeWithTheForks":                 testForkPages,
	}
}

// pagesFixture is a chain of twelve forks over which the sources kept changing after each fork
// (late messages on inherited turns, which no child may see), a child that appended to an
// inherited turn and was forked again, and a fork whose prefix held an unsettled turn.
func pagesFixture(t *testing.T, s forkengine.Store) (*historyFixture, []string) {
	f := newHistoryFixture(t, s)
	ids := f.chain(12)
	for i, id := range ids[:len(ids)-1] {
		f.append(id, fmt.Sprintf("%s-t%d", id, i+2), "late in "+id)
	}
	c3 := f.read("c3")
	f.append("c3", c3.Turns[0].ID, "c3's own note on an inherited turn")
	f.fork("c3", c3.Turns[1].ID, "c3-fork")
	f.addTurns("c3-fork", 3, 4)

	_, err := f.engine.ReportSession(f.ctx, forkengine.SessionReport{WorkspaceID: historyWS, ID: "open", Provider: "scripted",
		ProviderSessionID: ptrTo("p-open"), Title: ptrTo("open")})
	require.NoError(t, err)
	_, err = f.engine.ReportTurn(f.ctx, forkengine.TurnReport{WorkspaceID: historyWS, SessionID: "open", ID: "open-t1",
		Phase: forkengine.PhaseRunning})
	require.NoError(t, err)
	f.append("open", "open-t1", "open prompt")
	f.addTurns("open", 2, 3)
	f.fork("open", "open-t3", "open-fork")
	f.append("open", "open-t1", "open late")
	return f, append(ids, "c3-fork", "open", "open-fork", "empty-or-missing")
}

// flat is a transcript's messages in order.
func (tr transcript) flat() []forkengine.Message {
	var out []forkengine.Message
	for _, t := range tr.Turns {
		out = append(out, tr.Messages[t.ID]...)
	}
	return out
}

// messagesOf checks that each page message carries its turn's sequence and returns the messages.
func messagesOf(t *testing.T, tr transcript, page []forkengine.TranscriptMessage) []forkengine.Message {
	seqs := map[string]int64{}
	for _, turn := range tr.Turns {
		seqs[turn.ID] = turn.Sequence
	}
	var out []forkengine.Message
	for _, m := range page {
		require.Equal(t, seqs[m.TurnID], m.Sequence, "sequence of %s", m.ID)
		out = append(out, m.Message)
	}
	return out
}

func testTranscriptPages(t *testing.T, s forkengine.Store) {
	f, ids := pagesFixture(t, s)
	whole := map[string]transcript{}
	for _, id := range ids {
		whole[id] = f.read(id)
	}
	require.Contains(t, contentsOf(whole["c3-fork"].flat()), "c3's own note on an inherited turn")
	require.NotContains(t, contentsOf(whole["c12"].flat()), "late in c0")
	require.Contains(t, contentsOf(whole["open-fork"].flat()), "open prompt")
	require.NotContains(t, contentsOf(whole["open-fork"].flat()), "open late")

	counts, err := s.CountSessionMessages(f.ctx, historyWS, ids)
	require.NoError(t, err)
	for _, id := range ids {
		require.Equal(t, len(whole[id].flat()), counts[id], "count of %s", id)
	}
	for _, size := range []int{1, 3, 7, 1000} {
		// Forward, every session in one batch per page.
		got := map[string][]forkengine.TranscriptMessage{}
		cursors := map[string]forkengine.MessageCursor{}
		for pending := slices.Clone(ids); len(pending) > 0; {
			var next []string
			byCursor := map[forkengine.MessageCursor][]string{}
			for _, id := range pending {
				byCursor[cursors[id]] = append(byCursor[cursors[id]], id)
			}
			for c, batch := range byCursor {
				page, err := s.SessionMessagesAfter(f.ctx, historyWS, batch, c, size)
				require.NoError(t, err)
				for _, id := range batch {
					require.LessOrEqual(t, len(page[id]), size)
					got[id] = append(got[id], page[id]...)
					if len(page[id]) == size {
						cursors[id] = page[id][size-1].Cursor()
						next = append(next, id)
					}
				}
			}
			pending = next
		}
		for _, id := range ids {
			require.Equal(t, whole[id].flat(), messagesOf(t, whole[id], got[id]), "%s forward by %d", id, size)
		}
		// Backward, one session at a time.
		for _, id := range ids {
			var back []forkengine.TranscriptMessage
			for c := forkengine.TranscriptEnd; ; {
				page, err := s.SessionMessagesBefore(f.ctx, historyWS, []string{id}, c, size)
				require.NoError(t, err)
				back = append(back, page[id]...)
				if len(page[id]) < size {
					break
				}
				c = page[id][size-1].Cursor()
			}
			slices.Reverse(back)
			require.Equal(t, whole[id].flat(), messagesOf(t, whole[id], back), "%s backward by %d", id, size)
		}
	}
}

func testTurnMessagePages(t *testing.T, s forkengine.Store) {
	f, ids := pagesFixture(t, s)
	var turns []string
	want := map[string][]forkengine.Message{}
	for _, id := range ids {
		tr := f.read(id)
		for _, turn := range tr.Turns {
			turns = append(turns, turn.ID)
			want[turn.ID] = tr.Messages[turn.ID]
		}
	}
	turns = append(turns, "no-such-turn")
	counts, err := s.CountTurnMessages(f.ctx, historyWS, turns)
	require.NoError(t, err)
	for _, id := range turns {
		require.Equal(t, len(want[id]), counts[id], "count of %s", id)
	}
	for _, size := range []int{1, 2, 5} {
		got := map[string][]forkengine.Message{}
		after := map[string]int64{}
		for pending := slices.Clone(turns); len(pending) > 0; {
			var next []string
			byCursor := map[int64][]string{}
			for _, id := range pending {
				byCursor[after[id]] = append(byCursor[after[id]], id)
			}
			for c, batch := range byCursor {
				page, err := s.TurnMessagesAfter(f.ctx, historyWS, batch, c, size)
				require.NoError(t, err)
				for _, id := range batch {
					got[id] = append(got[id], page[id]...)
					if len(page[id]) == size {
						after[id] = page[id][size-1].Position
						next = append(next, id)
					}
				}
			}
			pending = next
		}
		for _, id := range turns {
			require.Equal(t, want[id], got[id], "%s forward by %d", id, size)
			var back []forkengine.Message
			for before := int64(0); ; {
				page, err := s.TurnMessagesBefore(f.ctx, historyWS, []string{id}, before, size)
				require.NoError(t, err)
				back = append(back, page[id]...)
				if len(page[id]) < size {
					break
				}
				before = page[id][size-1].Position
			}
			slices.Reverse(back)
			require.Equal(t, want[id], back, "%s backward by %d", id, size)
		}
	}
}

func testForkPages(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 3)
	for i := range 9 {
		f.fork("src", fmt.Sprintf("src-t%d", 1+i%3), fmt.Sprintf("fork-%d", i))
	}
	f.fork("fork-0", f.read("fork-0").Turns[0].ID, "fork-0-0")
	sources := []string{"src", "fork-0", "fork-1", "missing"}
	whole, err := s.LineagesBySourceIDs(f.ctx, historyWS, sources)
	require.NoError(t, err)
	require.Len(t, whole["src"], 9)
	counts, err := s.CountLineagesBySourceIDs(f.ctx, historyWS, sources)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"src": 9, "fork-0": 1}, counts)
	for _, size := range []int{1, 2, 4, 100} {
		for _, id := range sources {
			var got []forkengine.Lineage
			for c := (forkengine.PageCursor{}); ; {
				page, err := s.LineagesBySourceIDsAfter(f.ctx, historyWS, []string{id, "src"}, c, size)
				require.NoError(t, err)
				got = append(got, page[id]...)
				if len(page[id]) < size {
					break
				}
				last := page[id][size-1]
				c = forkengine.PageCursor{Time: last.ForkedAt, ID: last.TargetSessionID}
			}
			require.Equal(t, whole[id], got, "%s forward by %d", id, size)
			var back []forkengine.Lineage
			for c := (forkengine.PageCursor{}); ; {
				page, err := s.LineagesBySourceIDsBefore(f.ctx, historyWS, []string{id}, c, size)
				require.NoError(t, err)
				back = append(back, page[id]...)
				if len(page[id]) < size {
					break
				}
				last := page[id][size-1]
				c = forkengine.PageCursor{Time: last.ForkedAt, ID: last.TargetSessionID}
			}
			slices.Reverse(back)
			require.Equal(t, whole[id], back, "%s backward by %d", id, size)
		}
	}
}
