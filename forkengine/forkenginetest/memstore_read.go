package forkenginetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// memView implements forkengine.Reader over whichever state load returns: the committed one for
// MemStore, the working copy for a transaction.
type memView struct {
	load func() *memState
}

func notFound(what, ws, id string) error {
	return fmt.Errorf("%s %s in workspace %s: %w", what, id, ws, forkengine.ErrNotFound)
}

func idSet(ids []string) map[string]bool {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return set
}

// afterKey reports whether (t, id) sorts strictly after the cursor.
func afterKey(c forkengine.PageCursor, t time.Time, id string) bool {
	if c.IsZero() {
		return true
	}
	if n := t.Compare(c.Time); n != 0 {
		return n > 0
	}
	return id > c.ID
}

func compareKey(at time.Time, aid string, bt time.Time, bid string) int {
	if n := at.Compare(bt); n != 0 {
		return n
	}
	return cmp.Compare(aid, bid)
}

func limited[T any](rows []T, limit int) []T {
	if limit > 0 && len(rows) > limit {
		return rows[:limit]
	}
	return rows
}

// GetSession returns one session or ErrNotFound.
func (v memView) GetSession(_ context.Context, ws, id string) (forkengine.Session, error) {
	s, ok := v.load().sessions[rowKey{ws, id}]
	if !ok {
		return forkengine.Session{}, notFound("session", ws, id)
	}
	return s.Clone(), nil
}

// SessionsByIDs returns the sessions that exist among ids.
func (v memView) SessionsByIDs(_ context.Context, ws string, ids []string) (map[string]forkengine.Session, error) {
	st := v.load()
	out := map[string]forkengine.Session{}
	for _, id := range ids {
		if s, ok := st.sessions[rowKey{ws, id}]; ok {
			out[id] = s.Clone()
		}
	}
	return out, nil
}

func (v memView) filteredSessions(ws string, f forkengine.SessionFilter) []forkengine.Session {
	st := v.load()
	var rows []forkengine.Session
	var said map[rowKey][]string
	if len(f.Search) > 0 {
		said = st.ownTexts(ws)
	}
	for k, s := range st.sessions {
		if k.ws != ws || (f.Kind != "" && s.Kind != f.Kind) || (f.Provider != "" && s.Provider != f.Provider) {
			continue
		}
		if (f.Visible != nil && s.Visible != *f.Visible) || (!f.IncludeDeleted && s.Deleted()) {
			continue
		}
		if _, forked := st.lineages[k]; f.RootsOnly && forked {
			continue
		}
		if len(f.Search) > 0 && !forkengine.SearchDocumentMatches(f.Search, append([]string{s.Title}, said[k]...)...) {
			continue
		}
		rows = append(rows, s)
	}
	return rows
}

// ownTexts is, per session, the text of the messages it holds itself: with its title, its search
// document (a fork's inherited messages are the source's rows, not its own).
func (st *memState) ownTexts(ws string) map[rowKey][]string {
	out := map[rowKey][]string{}
	for _, m := range st.messages {
		if m.WorkspaceID == ws {
			k := rowKey{ws, m.SessionID}
			out[k] = append(out[k], m.Content)
		}
	}
	return out
}

// ListSessions pages sessions in (CreatedAt, ID) order.
func (v memView) ListSessions(_ context.Context, ws string, f forkengine.SessionFilter, after forkengine.PageCursor, limit int) ([]forkengine.Session, error) {
	var out []forkengine.Session
	for _, s := range v.filteredSessions(ws, f) {
		if afterKey(after, s.CreatedAt, s.ID) {
			out = append(out, s.Clone())
		}
	}
	slices.SortFunc(out, func(a, b forkengine.Session) int { return compareKey(a.CreatedAt, a.ID, b.CreatedAt, b.ID) })
	return limited(out, limit), nil
}

// CountSessions counts the sessions matching f.
func (v memView) CountSessions(_ context.Context, ws string, f forkengine.SessionFilter) (int, error) {
	return len(v.filteredSessions(ws, f)), nil
}

// GetTurn returns one turn or ErrNotFound.
func (v memView) GetTurn(_ context.Context, ws, id string) (forkengine.Turn, error) {
	t, ok := v.load().turnByID(ws, id)
	if !ok {
		return forkengine.Turn{}, notFound("turn", ws, id)
	}
	return t.Clone(), nil
}

// TurnsByIDs returns the turns that exist among ids.
func (v memView) TurnsByIDs(_ context.Context, ws string, ids []string) (map[string]forkengine.Turn, error) {
	st := v.load()
	out := map[string]forkengine.Turn{}
	for _, id := range ids {
		if t, ok := st.turnByID(ws, id); ok {
			out[id] = t.Clone()
		}
	}
	return out, nil
}

// turnsBySession groups the workspace's turns of the given sessions in sequence order.
func (v memView) turnsBySession(ws string, sessionIDs []string) map[string][]forkengine.Turn {
	st := v.load()
	out := map[string][]forkengine.Turn{}
	for id := range idSet(sessionIDs) {
		if turns := st.sessionTurns(ws, id); len(turns) > 0 {
			out[id] = turns
		}
	}
	return out
}

// TurnsBySessionIDs returns per session up to limit turns after afterSequence.
func (v memView) TurnsBySessionIDs(_ context.Context, ws string, sessionIDs []string, afterSequence int64, limit int) (map[string][]forkengine.Turn, error) {
	out := map[string][]forkengine.Turn{}
	for sid, turns := range v.turnsBySession(ws, sessionIDs) {
		var page []forkengine.Turn
		for _, t := range turns {
			if t.Sequence > afterSequence {
				page = append(page, t.Clone())
			}
		}
		if len(page) > 0 {
			out[sid] = limited(page, limit)
		}
	}
	return out, nil
}

// CountTurnsBySessionIDs counts each session's turns; sessions without turns are absent.
func (v memView) CountTurnsBySessionIDs(_ context.Context, ws string, sessionIDs []string) (map[string]int, error) {
	out := map[string]int{}
	for sid, turns := range v.turnsBySession(ws, sessionIDs) {
		out[sid] = len(turns)
	}
	return out, nil
}

// LatestTurnsBySessionIDs returns each session's highest-sequence turn.
func (v memView) LatestTurnsBySessionIDs(_ context.Context, ws string, sessionIDs []string) (map[string]forkengine.Turn, error) {
	return v.lastTurnWhere(ws, sessionIDs, func(forkengine.Turn) bool { return true }), nil
}

// ActiveTurnsBySessionIDs returns each session's highest-sequence unsettled turn.
func (v memView) ActiveTurnsBySessionIDs(_ context.Context, ws string, sessionIDs []string) (map[string]forkengine.Turn, error) {
	return v.lastTurnWhere(ws, sessionIDs, func(t forkengine.Turn) bool { return !t.Settled() }), nil
}

func (v memView) lastTurnWhere(ws string, sessionIDs []string, keep func(forkengine.Turn) bool) map[string]forkengine.Turn {
	out := map[string]forkengine.Turn{}
	for sid, turns := range v.turnsBySession(ws, sessionIDs) {
		for i := len(turns) - 1; i >= 0; i-- {
			if keep(turns[i]) {
				out[sid] = turns[i].Clone()
				break
			}
		}
	}
	return out
}

// TurnsThrough returns a session's turns up to maxSequence in order.
func (v memView) TurnsThrough(_ context.Context, ws, sessionID string, maxSequence int64) ([]forkengine.Turn, error) {
	var out []forkengine.Turn
	for _, t := range v.turnsBySession(ws, []string{sessionID})[sessionID] {
		if t.Sequence <= maxSequence {
			out = append(out, t.Clone())
		}
	}
	return out, nil
}
