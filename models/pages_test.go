package models

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func ptr[T any](v T) *T { return &v }

func TestParsePage(t *testing.T) {
	a, b := ptr("A"), ptr("B")
	cases := []struct {
		name          string
		first, last   *int
		after, before *string
		want          Page
		cursor        *string
		reason        string
	}{
		{name: "OK default forward", want: Page{Size: DefaultPageSize}},
		{name: "OK first after", first: ptr(3), after: a, want: Page{Size: 3, Cursored: true}, cursor: a},
		{name: "OK first zero", first: ptr(0), want: Page{Size: 0}},
		{name: "OK first max", first: ptr(MaxPageSize), want: Page{Size: MaxPageSize}},
		{name: "OK last before", last: ptr(2), before: b, want: Page{Size: 2, Backward: true, Cursored: true}, cursor: b},
		{name: "OK last alone reads from the end", last: ptr(2), want: Page{Size: 2, Backward: true}},
		{name: "OK last zero", last: ptr(0), want: Page{Backward: true}},
		{name: "OK before alone defaults last", before: b, want: Page{Size: DefaultPageSize, Backward: true, Cursored: true}, cursor: b},
		{name: "OK empty cursors are absent", first: ptr(1), after: ptr(""), before: ptr(""), want: Page{Size: 1}, cursor: ptr("")},
		{name: "invalid_first negative", first: ptr(-1), reason: ReasonInvalidFirst},
		{name: "invalid_first above max", first: ptr(MaxPageSize + 1), reason: ReasonInvalidFirst},
		{name: "invalid_last negative", last: ptr(-1), reason: ReasonInvalidLast},
		{name: "invalid_last above max", last: ptr(MaxPageSize + 1), before: b, reason: ReasonInvalidLast},
		{name: "conflict first and last", first: ptr(1), last: ptr(1), reason: ReasonConflictingPageArguments},
		{name: "conflict first and last zero", first: ptr(0), last: ptr(0), reason: ReasonConflictingPageArguments},
		{name: "conflict first and before", first: ptr(1), before: b, reason: ReasonConflictingPageArguments},
		{name: "conflict last and after", last: ptr(1), after: a, reason: ReasonConflictingPageArguments},
		{name: "conflict after and before", after: a, before: b, reason: ReasonConflictingPageArguments},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page, cursor, err := ParsePage(c.first, c.last, c.after, c.before)
			if c.reason != "" {
				require.Equal(t, forkengine.CodeInvalid, forkengine.ErrorCode(err))
				require.Equal(t, c.reason, forkengine.ErrorReason(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, page)
			require.Equal(t, c.cursor, cursor)
		})
	}
}

// TestPageInfoTruthTable builds pages from what a store would read (Size+1 rows at most, nearest
// the cursor first) and checks every pageInfo field.
func TestPageInfoTruthTable(t *testing.T) {
	cursor := func(n int) string { return strconv.Itoa(n) }
	cases := []struct {
		name             string
		page             Page
		read             []int
		rows             []int
		hasNext, hasPrev bool
	}{
		{"forward from start, more follow", Page{Size: 2}, []int{1, 2, 3}, []int{1, 2}, true, false},
		{"forward from start, exactly full", Page{Size: 2}, []int{1, 2}, []int{1, 2}, false, false},
		{"forward after a cursor, last page", Page{Size: 2, Cursored: true}, []int{4}, []int{4}, false, true},
		{"forward empty list", Page{Size: 2}, nil, nil, false, false},
		{"forward size zero with rows", Page{Size: 0}, []int{1}, nil, true, false},
		{"forward size zero after a cursor", Page{Size: 0, Cursored: true}, nil, nil, false, true},
		{"backward from end, more precede", Page{Size: 2, Backward: true}, []int{5, 4, 3}, []int{4, 5}, false, true},
		{"backward from end, exactly full", Page{Size: 2, Backward: true}, []int{2, 1}, []int{1, 2}, false, false},
		{"backward before a cursor, first page", Page{Size: 2, Backward: true, Cursored: true}, []int{1}, []int{1}, true, false},
		{"backward size zero with rows", Page{Size: 0, Backward: true}, []int{5}, nil, false, true},
		{"backward size zero before a cursor, nothing precedes", Page{Size: 0, Backward: true, Cursored: true}, nil, nil, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			read := append([]int(nil), c.read...)
			rows, info := pageOf(read, c.page, cursor)
			require.Equal(t, c.rows, nilIfEmpty(rows))
			require.Equal(t, c.hasNext, info.HasNextPage, "hasNextPage")
			require.Equal(t, c.hasPrev, info.HasPreviousPage, "hasPreviousPage")
			if len(c.rows) == 0 {
				require.Nil(t, info.StartCursor)
				require.Nil(t, info.EndCursor)
				return
			}
			require.Equal(t, cursor(c.rows[0]), *info.StartCursor)
			require.Equal(t, cursor(c.rows[len(c.rows)-1]), *info.EndCursor)
			require.Equal(t, c.read, read, "the store's slice is not reordered in place")
		})
	}
}

func nilIfEmpty(rows []int) []int {
	if len(rows) == 0 {
		return nil
	}
	return rows
}
