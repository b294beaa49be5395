package forkenginetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The session search contract (forkengine/search.go): every store finds the same sessions for
// the same words, pages them in the list's (CreatedAt, ID) order with the list's cursors, and
// counts exactly what it pages, through every write that changes a document or a filter class.
func searchTests() map[string]storeTest {
	return map[string]storeTest{
		"MatchesTitleAndOwnMessagesByWholeFoldedWords": testSearchMatches,
		"PagesInListOrderBothWays":                     testSearchPages,
		"CombinesWithEveryFilter":                      testSearchFilters,
		"FollowsTitleChangesAndPurges":                 testSearchFollowsWrites,
		"ForkMatchesItsTitleAndOwnMessagesOnly":        testSearchForks,
		"BoundedPagesOfWordsThatNeverMeetEndEmpty":     testSearchBoundedNeverMeet,
		"BoundedPagesReachEveryMatchOnce":              testSearchBoundedReachesAll,
		"BoundedCountIsExactBelowTheBound":             testSearchBoundedCount,
	}
}

// searchFor is the filter of a search text, as the API makes it.
func searchFor(t *testing.T, text string, f forkengine.SessionFilter) forkengine.SessionFilter {
	t.Helper()
	terms, err := forkengine.ParseSearch(text)
	require.NoError(t, err)
	f.Search = terms
	return f
}

// seedSearchSession stores a session with a title and one turn holding the given messages.
func seedSearchSession(t *testing.T, s forkengine.Store, ws, id, title string, minute int, said ...string) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		sess := newSession(ws, id)
		sess.Title, sess.CreatedAt = title, at(minute)
		if err := tx.UpsertSession(ctx, sess); err != nil {
			return err
		}
		if len(said) == 0 {
			return nil
		}
		if err := tx.UpsertTurn(ctx, newTurn(ws, id, id+"-t1", 1)); err != nil {
			return err
		}
		msgs := make([]forkengine.Message, len(said))
		for i, text := range said {
			msgs[i] = newMessage(ws, id, id+"-t1", fmt.Sprintf("%s-m%d", id, i))
			msgs[i].Content = text
		}
		_, err := tx.InsertMessages(ctx, msgs)
		return err
	})
}

// searched lists every session a search finds, and checks its count and its backward read
// agree with it.
func searched(t *testing.T, s forkengine.Store, ws string, f forkengine.SessionFilter) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := s.ListSessions(ctx, ws, f, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	got := ids(rows, sessionID)
	n, err := s.CountSessions(ctx, ws, f)
	require.NoError(t, err)
	require.Equal(t, len(got), n, "totalCount of %v is what it lists", f.Search)
	back, err := s.ListSessionsBefore(ctx, ws, f, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	backIDs := ids(back, sessionID)
	for i, j := 0, len(backIDs)-1; i < j; i, j = i+1, j-1 {
		backIDs[i], backIDs[j] = backIDs[j], backIDs[i]
	}
	require.Equal(t, got, backIDs, "a backward read of %v finds the same sessions", f.Search)
	if got == nil {
		return []string{}
	}
	return got
}

func testSearchMatches(t *testing.T, s forkengine.Store) {
	seedSearchSession(t, s, wsA, "deploy", "Deploy notes", 1, "the canary went out at noon")
	seedSearchSession(t, s, wsA, "deployed", "Friday", 2, "We DEPLOYED it; the Canary is fine.")
	seedSearchSession(t, s, wsA, "tokyo", "旅行", 3, "東京タワーに行きました")
	seedSearchSession(t, s, wsA, "accents", "Café menu", 4, "ÉCLAIR and crème brûlée")
	seedSearchSession(t, s, wsA, "silent", "no words here", 5)
	seedSearchSession(t, s, wsB, "other", "deploy canary", 6, "deploy canary")

	cases := []struct {
		search string
		want   []string
	}{
		{"deploy", []string{"deploy"}},                   // whole words: "deployed" is another word
		{"DEPLOYED", []string{"deployed"}},               // case-folded
		{"canary", []string{"deploy", "deployed"}},       // message text
		{"canary noon", []string{"deploy"}},              // every word, title or message
		{"notes canary", []string{"deploy"}},             // one word in the title, one in a message
		{"canary   ,friday!", []string{"deployed"}},      // punctuation and spaces only separate
		{"東京", []string{"tokyo"}},                        // ideographs and kana are words of their own
		{"café éclair", []string{"accents"}},             // letters beyond ASCII fold too
		{"here words", []string{"silent"}},               // a title alone
		{"canary absent", []string{}},                    // a word no session has
		{"nothing-at-all-matches-this", []string{}},      // nor these
		{"the", []string{"deploy", "deployed"}},          // no stop words
		{"Deploy deploy DEPLOY", []string{"deploy"}},     // a word twice is one word
		{"noon canary the went out", []string{"deploy"}}, // five words
	}
	for _, c := range cases {
		require.Equal(t, c.want, searched(t, s, wsA, searchFor(t, c.search, forkengine.SessionFilter{})), "search %q", c.search)
	}
	require.Equal(t, []string{"other"}, searched(t, s, wsB, searchFor(t, "deploy", forkengine.SessionFilter{})),
		"another workspace's sessions stay in it")
}

func testSearchPages(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	// Twelve sessions, three to a creation time (so ids break ties), every other one matching.
	var want []string
	for i := range 12 {
		id := fmt.Sprintf("s%02d", 11-i) // ids against creation order, so the key is not the id
		text := "filler"
		if i%2 == 0 {
			text = "needle in the haystack"
			want = append(want, id)
		}
		seedSearchSession(t, s, wsA, id, "session "+id, i/3, text)
	}
	f := searchFor(t, "needle haystack", forkengine.SessionFilter{})
	all, err := s.ListSessions(ctx, wsA, forkengine.SessionFilter{}, forkengine.PageCursor{}, 0)
	require.NoError(t, err)
	var listed []string
	for _, sess := range all {
		if slices.Contains(want, sess.ID) {
			listed = append(listed, sess.ID)
		}
	}
	require.Equal(t, listed, searched(t, s, wsA, f), "a search keeps the list's order")
	for _, size := range []int{1, 2, 5} {
		var forward []string
		for _, page := range pages(t, size, func(after forkengine.PageCursor, n int) ([]forkengine.Session, error) {
			return s.ListSessions(ctx, wsA, f, after, n)
		}, sessionCursor) {
			require.LessOrEqual(t, len(page), size)
			forward = append(forward, ids(page, sessionID)...)
		}
		require.Equal(t, listed, forward, "pages of %d forward", size)
		var backward []string
		for before := (forkengine.PageCursor{}); ; {
			page, err := s.ListSessionsBefore(ctx, wsA, f, before, size)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			for _, sess := range page {
				backward = append([]string{sess.ID}, backward...)
			}
			before = sessionCursor(page[len(page)-1])
		}
		require.Equal(t, listed, backward, "pages of %d backward", size)
	}
	// A cursor of the plain list is a position in the search too.
	mid := sessionCursor(all[5])
	after, err := s.ListSessions(ctx, wsA, f, mid, 0)
	require.NoError(t, err)
	var wantAfter []string
	for _, sess := range all[6:] {
		if slices.Contains(want, sess.ID) {
			wantAfter = append(wantAfter, sess.ID)
		}
	}
	require.Equal(t, wantAfter, ids(after, sessionID))
}

func testSearchFilters(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	no, yes := false, true
	for i, id := range []string{"plain", "hidden", "deleted", "child", "forked", "quiet"} {
		text := "shared word"
		if id == "quiet" {
			text = "nothing"
		}
		seedSearchSession(t, s, wsA, id, "session "+id, i, text)
	}
	// The classes change after the words were indexed: each write must move the session's words.
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		hidden, err := tx.GetSession(ctx, wsA, "hidden")
		if err != nil {
			return err
		}
		hidden.Visible = false
		if err := tx.UpsertSession(ctx, hidden); err != nil {
			return err
		}
		child, err := tx.GetSession(ctx, wsA, "child")
		if err != nil {
			return err
		}
		child.Kind, child.Provider = forkengine.SessionChild, "webhook"
		if err := tx.UpsertSession(ctx, child); err != nil {
			return err
		}
		if err := tx.SoftDeleteSession(ctx, wsA, "deleted", at(20)); err != nil {
			return err
		}
		return tx.InsertLineage(ctx, forkengine.Lineage{WorkspaceID: wsA, OperationID: "op-f", SourceSessionID: "plain",
			SourceTurnID: "plain-t1", TargetSessionID: "forked", TargetTurnID: "forked-t1", ForkedAt: at(21)})
	})
	cases := []struct {
		filter forkengine.SessionFilter
		want   []string
	}{
		{forkengine.SessionFilter{}, []string{"plain", "hidden", "child", "forked"}},
		{forkengine.SessionFilter{IncludeDeleted: true}, []string{"plain", "hidden", "deleted", "child", "forked"}},
		{forkengine.SessionFilter{Visible: &no}, []string{"hidden"}},
		{forkengine.SessionFilter{Visible: &yes}, []string{"plain", "child", "forked"}},
		{forkengine.SessionFilter{RootsOnly: true}, []string{"plain", "hidden", "child"}},
		{forkengine.SessionFilter{Kind: forkengine.SessionChild}, []string{"child"}},
		{forkengine.SessionFilter{Provider: "webhook"}, []string{"child"}},
		{forkengine.SessionFilter{Provider: "simulated", RootsOnly: true, Visible: &yes}, []string{"plain"}},
	}
	for _, c := range cases {
		for _, text := range []string{"shared", "shared word"} {
			require.Equal(t, c.want, searched(t, s, wsA, searchFor(t, text, c.filter)), "search %q with %+v", text, c.filter)
		}
	}
	// And back: shown again, and the lineage gone with its source's purge.
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		hidden, err := tx.GetSession(ctx, wsA, "hidden")
		if err != nil {
			return err
		}
		hidden.Visible = true
		if err := tx.UpsertSession(ctx, hidden); err != nil {
			return err
		}
		return tx.PurgeSession(ctx, wsA, "plain")
	})
	require.Equal(t, []string{"hidden", "child", "forked"}, searched(t, s, wsA, searchFor(t, "shared", forkengine.SessionFilter{RootsOnly: true, Visible: &yes})))
	n, err := s.CountSessions(ctx, wsA, searchFor(t, "shared", forkengine.SessionFilter{IncludeDeleted: true}))
	require.NoError(t, err)
	require.Equal(t, 4, n)
}

func testSearchFollowsWrites(t *testing.T, s forkengine.Store) {
	ctx := context.Background()
	seedSearchSession(t, s, wsA, "s1", "alpha beta", 1, "alpha said aloud")
	seedSearchSession(t, s, wsA, "s2", "gamma", 2)
	retitle := func(id, title string, minute int) {
		update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
			sess, err := tx.GetSession(ctx, wsA, id)
			if err != nil {
				return err
			}
			sess.Title, sess.CreatedAt = title, at(minute)
			return tx.UpsertSession(ctx, sess)
		})
	}
	find := func(text string) []string { return searched(t, s, wsA, searchFor(t, text, forkengine.SessionFilter{})) }
	retitle("s1", "beta delta", 1)
	require.Equal(t, []string{"s1"}, find("alpha"), "a word of the old title that a message says still matches")
	require.Equal(t, []string{"s1"}, find("delta"))
	retitle("s2", "epsilon", 2)
	require.Equal(t, []string{}, find("gamma"), "a word only the old title had is gone")
	require.Equal(t, []string{"s2"}, find("epsilon"))
	// A session whose creation time is rewritten moves in the search's order as in the list's.
	retitle("s2", "epsilon alpha", 0)
	require.Equal(t, []string{"s2", "s1"}, find("alpha"))
	// Messages added later join the document.
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error {
		m := newMessage(wsA, "s1", "s1-t1", "s1-late")
		m.Content = "a zeta appears"
		_, err := tx.InsertMessages(ctx, []forkengine.Message{m})
		return err
	})
	require.Equal(t, []string{"s1"}, find("zeta alpha"))
	update(t, s, func(ctx context.Context, tx forkengine.Tx) error { return tx.PurgeSession(ctx, wsA, "s1") })
	require.Equal(t, []string{}, find("zeta"), "a purged session's words go with it")
	require.Equal(t, []string{"s2"}, find("alpha"))
	// A purged id reported again is a new session, with nothing of the old document.
	seedSearchSession(t, s, wsA, "s1", "fresh", 3)
	require.Equal(t, []string{}, find("zeta"))
	n, err := s.CountSessions(ctx, wsA, searchFor(t, "zeta", forkengine.SessionFilter{IncludeDeleted: true}))
	require.NoError(t, err)
	require.Zero(t, n)
}

func testSearchForks(t *testing.T, s forkengine.Store) {
	f := newHistoryFixture(t, s)
	f.root("src", 2)
	f.append("src", "src-t1", "the walrus spoke first")
	f.fork("src", "src-t2", "child")
	f.append("src", "src-t2", "a later pelican") // after the fork: never the child's
	find := func(text string) []string {
		return searched(t, s, historyWS, searchFor(t, text, forkengine.SessionFilter{}))
	}
	require.Equal(t, []string{"src"}, find("walrus"), "inherited text finds the source, where it was said")
	require.Equal(t, []string{"src"}, find("pelican"))
	child := f.read("child")
	f.append("child", child.Turns[0].ID, "the child's own narwhal")
	require.Equal(t, []string{"child"}, find("narwhal"), "a child's own messages are its document")
	require.Equal(t, []string{}, find("walrus narwhal"), "the child's document is not its inherited history")
	sess, err := s.GetSession(context.Background(), historyWS, "child")
	require.NoError(t, err)
	titleWords := forkengine.SearchTerms(sess.Title)
	require.NotEmpty(t, titleWords)
	require.Contains(t, find(titleWords[len(titleWords)-1]), "child", "a child's title is its document")
}
