package models

import (
	"slices"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Reason codes of BAD_USER_INPUT errors about a connection's page arguments.
const (
	ReasonInvalidFirst = "invalid_first"
	ReasonInvalidLast  = "invalid_last"
	// ReasonConflictingPageArguments refuses the combinations the Relay spec allows but
	// discourages, each of which would mix the two directions in one page: `first` with `last`,
	// `first` with `before`, `last` with `after`, and `after` with `before`.
	ReasonConflictingPageArguments = "conflicting_page_arguments"
)

// Page size bounds of every connection. 0 is a valid size: an empty page that still answers
// pageInfo (genqlient, for one, sends an unset `first` as 0).
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// Page is a connection's validated window: how many edges, read from which end, and whether a
// cursor bounds the side it is read from.
type Page struct {
	// Size is the number of edges wanted; the store is asked for one more, to learn whether the
	// page is cut short.
	Size int
	// Backward is a `last`/`before` page: read newest first from the end (or from `before`).
	Backward bool
	// Cursored says `after` (forward) or `before` (backward) was given.
	Cursored bool
}

// ParsePage validates a connection's Relay arguments and returns its window and the cursor of its
// direction (after, or before for a backward page), still encoded. Neither `first` nor `last`
// means `first: 50`, or `last: 50` when only `before` is given. Errors: BAD_USER_INPUT with reason
// invalid_first, invalid_last (outside 0..200) or conflicting_page_arguments.
func ParsePage(first, last *int, after, before *string) (Page, *string, error) {
	hasAfter, hasBefore := given(after), given(before)
	switch {
	case first != nil && last != nil:
		return Page{}, nil, conflict("first and last")
	case first != nil && hasBefore:
		return Page{}, nil, conflict("first and before")
	case last != nil && hasAfter:
		return Page{}, nil, conflict("last and after")
	case hasAfter && hasBefore:
		return Page{}, nil, conflict("after and before")
	}
	if last != nil || hasBefore {
		size, err := pageSize(last, "last", ReasonInvalidLast)
		return Page{Size: size, Backward: true, Cursored: hasBefore}, before, err
	}
	size, err := pageSize(first, "first", ReasonInvalidFirst)
	return Page{Size: size, Cursored: hasAfter}, after, err
}

func given(cursor *string) bool { return cursor != nil && *cursor != "" }

func pageSize(n *int, name, reason string) (int, error) {
	if n == nil {
		return DefaultPageSize, nil
	}
	if *n < 0 || *n > MaxPageSize {
		return 0, forkengine.ReasonErrorf(forkengine.CodeInvalid, reason,
			"%s must be between 0 and %d, got %d", name, MaxPageSize, *n)
	}
	return *n, nil
}

func conflict(pair string) error {
	return forkengine.ReasonErrorf(forkengine.CodeInvalid, ReasonConflictingPageArguments,
		"%s cannot be combined: page forward with first/after or backward with last/before", pair)
}

// pageOf turns what the store read for a window (up to Size+1 rows, nearest the cursor first)
// into the page's rows in list order and its PageInfo. The look-ahead row says the page was cut
// short on the side it was read towards; the other side is known only by its cursor: a page read
// from a cursor has the cursor's row (or what preceded it) on that side, a page read from an end
// has nothing there.
func pageOf[T any](rows []T, p Page, cursor func(T) string) ([]T, *PageInfo) {
	more := len(rows) > p.Size
	if more {
		rows = rows[:p.Size]
	}
	info := &PageInfo{HasNextPage: more, HasPreviousPage: p.Cursored}
	if p.Backward {
		rows = slices.Clone(rows) // the loaders may hand the same slice to another field
		slices.Reverse(rows)
		info.HasNextPage, info.HasPreviousPage = p.Cursored, more
	}
	if len(rows) > 0 {
		start, end := cursor(rows[0]), cursor(rows[len(rows)-1])
		info.StartCursor, info.EndCursor = &start, &end
	}
	return rows, info
}
