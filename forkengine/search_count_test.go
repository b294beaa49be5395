package forkengine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// TestSearchPageCountOfFirstPage: a short first forward page of a bounded search is its count (a
// lower bound when the read stopped at its bound); a full page, another page, a backward page
// and a one-word search (counted exactly from the word counts) leave the count to be read.
func TestSearchPageCountOfFirstPage(t *testing.T) {
	t.Parallel()
	two := forkengine.SessionFilter{Search: []string{"alpha", "beta"}}
	one := forkengine.SessionFilter{Search: []string{"alpha"}}
	oneByKind := forkengine.SessionFilter{Search: []string{"alpha"}, Kind: forkengine.SessionRoot}
	sessions := func(n int) []forkengine.Session { return make([]forkengine.Session, n) }
	at := forkengine.PageCursor{Time: time.Unix(5, 0), ID: "s5"}
	for _, c := range []struct {
		name   string
		f      forkengine.SessionFilter
		read   forkengine.SearchPage
		size   int
		back   bool
		cursor forkengine.PageCursor
		want   forkengine.SearchCount
		ok     bool
	}{
		{"short, all rows read", two, forkengine.SearchPage{Sessions: sessions(2)}, 3, false, forkengine.PageCursor{}, forkengine.SearchCount{N: 2}, true},
		{"short, stopped at the bound", two, forkengine.SearchPage{Sessions: sessions(1), Reached: at}, 3, false, forkengine.PageCursor{}, forkengine.SearchCount{N: 1, LowerBound: true}, true},
		{"empty", two, forkengine.SearchPage{}, 3, false, forkengine.PageCursor{}, forkengine.SearchCount{}, true},
		{"one word by kind", oneByKind, forkengine.SearchPage{Sessions: sessions(3)}, 3, false, forkengine.PageCursor{}, forkengine.SearchCount{N: 3}, true},
		{"full page", two, forkengine.SearchPage{Sessions: sessions(4)}, 3, false, forkengine.PageCursor{}, forkengine.SearchCount{}, false},
		{"after a cursor", two, forkengine.SearchPage{Sessions: sessions(1)}, 3, false, at, forkengine.SearchCount{}, false},
		{"backward", two, forkengine.SearchPage{Sessions: sessions(1)}, 3, true, forkengine.PageCursor{}, forkengine.SearchCount{}, false},
		{"one word", one, forkengine.SearchPage{Sessions: sessions(1), Reached: at}, 3, false, forkengine.PageCursor{}, forkengine.SearchCount{}, false},
		{"no search", forkengine.SessionFilter{}, forkengine.SearchPage{Sessions: sessions(1)}, 3, false, forkengine.PageCursor{}, forkengine.SearchCount{}, false},
	} {
		got, ok := c.read.CountOfFirstPage(c.f, c.size, c.cursor, c.back)
		require.Equal(t, c.ok, ok, c.name)
		require.Equal(t, c.want, got, c.name)
	}
}
