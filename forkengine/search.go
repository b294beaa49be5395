package forkengine

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Finding a session (issue 27, item 13). A session's search document is its title and the text
// of the messages it holds itself; a fork's inherited history is not part of its document (a
// fork holds it by reference, and indexing it again would make every fork O(transcript)). The
// document and a search are cut into the same words here, in Go, so every store indexes and
// looks up exactly the same terms:
//
//   - a word is a run of letters, digits and marks, folded to lower case (Unicode simple case
//     folding through strings.ToLower), so "Deploy", "DEPLOY" and "deploy" are one word;
//   - an ideograph or kana or hangul syllable (scripts written without spaces) is a word of its
//     own, so a search for "東京" finds "東京タワー";
//   - a word longer than MaxSearchTermBytes is cut to its first MaxSearchTermBytes bytes (at a
//     character boundary), the same in a document and in a search.
//
// A search matches the sessions whose document has every word of it (whole words; no prefixes,
// no stemming). Its results keep the list's order, (createdAt, id), so cursors page a search
// as they page the list.

// Search limits.
const (
	MaxSearchLength    = 200 // bytes of the search text a client gives
	MaxSearchTerms     = 8   // distinct words of one search
	MaxSearchTermBytes = 64  // a longer word is cut to this many bytes
)

// ReasonInvalidSearch marks a BAD_USER_INPUT for a session search: longer than
// MaxSearchLength, more than MaxSearchTerms words, no word at all (only spaces or punctuation),
// or text that is not valid UTF-8 or holds NUL.
const ReasonInvalidSearch = "invalid_search"

// SearchTerms cuts text into its distinct words, as a document is indexed (see above), in the
// order they first appear.
func SearchTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if len(w) > MaxSearchTermBytes {
			cut := MaxSearchTermBytes
			for cut > 0 && !utf8.RuneStart(w[cut]) {
				cut--
			}
			w = w[:cut]
		}
		if w != "" && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	start := -1
	for i, r := range text {
		switch {
		case standsAlone(r):
			if start >= 0 {
				add(strings.ToLower(text[start:i]))
				start = -1
			}
			add(strings.ToLower(string(r)))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				add(strings.ToLower(text[start:i]))
				start = -1
			}
		}
	}
	if start >= 0 {
		add(strings.ToLower(text[start:]))
	}
	return out
}

// standsAlone reports a character of a script written without spaces between words.
func standsAlone(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// ParseSearch checks the search text a client gave and returns its words, sorted (so two
// spellings of one search are one filter and one cursor scope). An empty or all-space text is
// no search (nil, nil). Errors: BAD_USER_INPUT with reason invalid_search.
func ParseSearch(text string) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if len(text) > MaxSearchLength {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidSearch, "search is longer than %d bytes", MaxSearchLength)
	}
	if strings.IndexByte(text, 0) >= 0 || !utf8.ValidString(text) {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidSearch, "search must be valid UTF-8 without NUL (U+0000) characters")
	}
	terms := SearchTerms(text)
	if len(terms) == 0 {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidSearch, "search %q has no word to look for (letters or digits)", text)
	}
	if len(terms) > MaxSearchTerms {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidSearch, "search has %d words; at most %d", len(terms), MaxSearchTerms)
	}
	slices.Sort(terms)
	return terms, nil
}

// SearchDocumentMatches reports whether a document of the given texts holds every term: the
// rule the stores implement with their indexes, written once for the in-memory store and tests.
func SearchDocumentMatches(terms []string, texts ...string) bool {
	missing := map[string]bool{}
	for _, t := range terms {
		missing[t] = true
	}
	for _, text := range texts {
		for _, w := range SearchTerms(text) {
			delete(missing, w)
		}
		if len(missing) == 0 {
			return true
		}
	}
	return len(missing) == 0
}

// SearchScanRows bounds the index rows one API search page, or the count of a search of several
// words (or one narrowed by kind or provider), examines: the rows of the search's rarest word
// (the lead) from the cursor on. It keeps a page and its totalCount O(1) in the matches
// whatever the words: two common words that seldom meet cost SearchScanRows rows, not every
// row of the rarer one. A few thousand rows of a b-tree range are a few milliseconds.
const SearchScanRows = 4000

// SearchPage is what a bounded search read found: up to its limit sessions, nearest the cursor
// first, and where it stopped.
type SearchPage struct {
	Sessions []Session
	// Reached is the key of the last lead-word row examined when the read examined its scan
	// bound before it found limit sessions and rows remain past it: the rows up to Reached hold
	// no other match, and the next page is read from it (it may name a session that does not
	// match). Zero when the read found limit sessions or reached the end of the rows.
	Reached PageCursor
}

// SearchCount is the count of a search's matches: exact, or, when LowerBound, the matches among
// the first scan rows of its lead word (more rows were left unexamined).
type SearchCount struct {
	N          int
	LowerBound bool
}

// CountOfFirstPage is the count of a bounded search that this page answers itself: a short first
// page (forward, from no cursor, at most size sessions) examined the same index rows CountSearch
// counts among (the lead word's first scan rows, or all of them) and found every match in them,
// so the count is the page's, and a lower bound when the read stopped at its bound (Reached). ok
// is false for a full page or another page, and for one word without kind or provider, whose
// count is exact and O(1) from the word counts, not bounded.
func (p SearchPage) CountOfFirstPage(f SessionFilter, size int, from PageCursor, backward bool) (SearchCount, bool) {
	if len(f.Search) == 0 || (len(f.Search) == 1 && f.Kind == "" && f.Provider == "") ||
		!from.IsZero() || backward || len(p.Sessions) > size {
		return SearchCount{}, false
	}
	return SearchCount{N: len(p.Sessions), LowerBound: !p.Reached.IsZero()}, true
}
