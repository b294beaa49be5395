package forkenginetest

import (
	"context"
	"errors"
	"slices"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The bounded search reads, as the SQL stores walk their index: the rows of a word are the
// sessions (of any class) whose document holds it, in (CreatedAt, ID) order; the lead is the
// word fewest sessions of the filter's classes hold (the first such in the search's order), and
// a bounded read examines at most scan of its rows from the cursor.

// searchLead returns the lead word's sessions in key order (descending when backward), or
// false when some word is held by no session of f's classes (nothing matches).
func (v memView) searchLead(ws string, f forkengine.SessionFilter, backward bool) ([]forkengine.Session, bool) {
	st := v.load()
	said := st.ownTexts(ws)
	classes := forkengine.SessionFilter{Visible: f.Visible, IncludeDeleted: f.IncludeDeleted, RootsOnly: f.RootsOnly}
	inClasses := map[string]bool{}
	for _, s := range v.filteredSessions(ws, classes) {
		inClasses[s.ID] = true
	}
	rows := map[string][]forkengine.Session{}
	held := map[string]int{}
	for k, s := range st.sessions {
		if k.ws != ws {
			continue
		}
		doc := append([]string{s.Title}, said[k]...)
		for _, t := range f.Search {
			if forkengine.SearchDocumentMatches([]string{t}, doc...) {
				rows[t] = append(rows[t], s)
				if inClasses[s.ID] {
					held[t]++
				}
			}
		}
	}
	lead := ""
	for _, t := range f.Search {
		if held[t] == 0 {
			return nil, false
		}
		if lead == "" || held[t] < held[lead] {
			lead = t
		}
	}
	out := rows[lead]
	slices.SortFunc(out, func(a, b forkengine.Session) int { return compareKey(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
	if backward {
		slices.Reverse(out)
	}
	return out, true
}

// leadFrom is the part of the lead's rows strictly past the cursor, at most scan of them (<= 0:
// all), and whether rows remain past those.
func leadFrom(rows []forkengine.Session, cursor forkengine.PageCursor, scan int, backward bool) ([]forkengine.Session, bool) {
	var from []forkengine.Session
	for _, s := range rows {
		if (!backward && afterKey(cursor, s.CreatedAt, s.ID)) || (backward && beforeKey(cursor, s.CreatedAt, s.ID)) {
			from = append(from, s)
		}
	}
	if scan > 0 && len(from) > scan {
		return from[:scan], true
	}
	return from, false
}

// SearchSessions reads a bounded search page (forkengine.Reader).
func (v memView) SearchSessions(_ context.Context, ws string, f forkengine.SessionFilter, from forkengine.PageCursor, limit, scan int, backward bool) (forkengine.SearchPage, error) {
	if len(f.Search) == 0 {
		return forkengine.SearchPage{}, errors.New("search sessions: no search words")
	}
	page := forkengine.SearchPage{Sessions: []forkengine.Session{}}
	lead, ok := v.searchLead(ws, f, backward)
	if !ok {
		return page, nil
	}
	match := idSet(ids(v.filteredSessions(ws, f), sessionID))
	rows, more := leadFrom(lead, from, scan, backward)
	for _, s := range rows {
		if match[s.ID] {
			if page.Sessions = append(page.Sessions, s.Clone()); limit > 0 && len(page.Sessions) == limit {
				return page, nil
			}
		}
	}
	if more {
		last := rows[len(rows)-1]
		page.Reached = forkengine.PageCursor{Time: last.CreatedAt, ID: last.ID}
	}
	return page, nil
}

// CountSearch counts a search (forkengine.Reader): exact for one word without kind or
// provider, else the matches among the lead's first scan rows.
func (v memView) CountSearch(_ context.Context, ws string, f forkengine.SessionFilter, scan int) (forkengine.SearchCount, error) {
	matches := v.filteredSessions(ws, f)
	if len(f.Search) == 1 && f.Kind == "" && f.Provider == "" {
		return forkengine.SearchCount{N: len(matches)}, nil
	}
	lead, ok := v.searchLead(ws, f, false)
	if !ok {
		return forkengine.SearchCount{}, nil
	}
	match := idSet(ids(matches, sessionID))
	rows, more := leadFrom(lead, forkengine.PageCursor{}, scan, false)
	out := forkengine.SearchCount{LowerBound: more}
	for _, s := range rows {
		if match[s.ID] {
			out.N++
		}
	}
	return out, nil
}
