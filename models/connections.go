package models

import (
	"sync"
	"time"

	"github.com/forkgraph/forkgraph/forkengine"
)

// SessionConnection is a page of sessions. totalCount is resolved (one count statement) only when
// a client selects it, from the workspace and filter kept here.
type SessionConnection struct {
	Edges    []*SessionEdge
	PageInfo *PageInfo

	WorkspaceID string
	Filter      forkengine.SessionFilter

	// count is read once for totalCount and totalCountIsLowerBound (Count).
	count struct {
		once sync.Once
		c    forkengine.SearchCount
		err  error
	}
}

// Count returns what read returns, calling it once per connection: totalCount and
// totalCountIsLowerBound are one count, whichever fields a client selects.
func (c *SessionConnection) Count(read func() (forkengine.SearchCount, error)) (forkengine.SearchCount, error) {
	c.count.once.Do(func() { c.count.c, c.count.err = read() })
	return c.count.c, c.count.err
}

// KnowCount sets what Count returns without a read, when the page's own read already counted
// it (see SearchConnectionFrom); a count read before is kept.
func (c *SessionConnection) KnowCount(sc forkengine.SearchCount) {
	c.count.once.Do(func() { c.count.c = sc })
}

// SearchConnectionFrom is SessionConnectionFrom for a page read by a bounded search: when the
// read stopped at its bound (read.Reached) the page says more follow on the side it was read
// towards and its cursor there is the position reached, so a client that pages on continues
// from it and reaches every match. A page without edges then has both cursors at the position.
//
// A short first page also knows the connection's count (forkengine.SearchPage.CountOfFirstPage): totalCount of
// a search of several words then costs no second walk of the rows the page walked, the worst
// case of a search page ("half odd" in bench/search: two common words that never meet).
func SearchConnectionFrom(workspaceID string, f forkengine.SessionFilter, read forkengine.SearchPage, page Page, cursor forkengine.PageCursor, rel Relations) *SessionConnection {
	conn := SessionConnectionFrom(workspaceID, f, read.Sessions, page, rel)
	if sc, ok := read.CountOfFirstPage(f, page.Size, cursor, page.Backward); ok {
		conn.KnowCount(sc)
	}
	if read.Reached.IsZero() {
		return conn
	}
	at := SessionCursor(SessionListScope(workspaceID, f), forkengine.Session{CreatedAt: read.Reached.Time, ID: read.Reached.ID})
	info := conn.PageInfo
	if len(conn.Edges) == 0 {
		info.StartCursor, info.EndCursor = &at, &at
	}
	if page.Backward {
		info.HasPreviousPage, info.StartCursor = true, &at
	} else {
		info.HasNextPage, info.EndCursor = true, &at
	}
	return conn
}

// SessionConnectionFrom builds a page from what the store read for it: up to page.Size+1
// sessions, nearest the cursor first (the extra one only says the page was cut short). rel
// resolves the relations of its sessions (see Relations).
func SessionConnectionFrom(workspaceID string, f forkengine.SessionFilter, rows []forkengine.Session, page Page, rel Relations) *SessionConnection {
	scope := SessionListScope(workspaceID, f)
	rows, info := pageOf(rows, page, func(s forkengine.Session) string { return SessionCursor(scope, s) })
	// The edges and the views are one array each: a page of 100 is four allocations, not 201.
	edges, edgeValues, views := make([]*SessionEdge, len(rows)), make([]SessionEdge, len(rows)), make([]Session, len(rows))
	for i, s := range rows {
		sessionInto(&views[i], s, rel)
		edgeValues[i] = SessionEdge{Cursor: SessionCursor(scope, s), Node: &views[i]}
		edges[i] = &edgeValues[i]
	}
	return &SessionConnection{Edges: edges, PageInfo: info, WorkspaceID: workspaceID, Filter: f}
}

// ForkOperationConnection is a page of fork operations; totalCount is resolved when selected.
type ForkOperationConnection struct {
	Edges    []*ForkOperationEdge
	PageInfo *PageInfo

	WorkspaceID string
	Filter      forkengine.OperationFilter
}

// ForkOperationConnectionFrom builds a page from up to page.Size+1 operations, nearest the cursor first.
func ForkOperationConnectionFrom(workspaceID string, f forkengine.OperationFilter, rows []forkengine.ForkOperation, page Page) *ForkOperationConnection {
	scope := OperationListScope(workspaceID, f)
	rows, info := pageOf(rows, page, func(op forkengine.ForkOperation) string { return OperationCursor(scope, op) })
	edges := make([]*ForkOperationEdge, len(rows))
	for i, op := range rows {
		edges[i] = &ForkOperationEdge{Cursor: OperationCursor(scope, op), Node: ForkOperationFrom(op)}
	}
	return &ForkOperationConnection{Edges: edges, PageInfo: info, WorkspaceID: workspaceID, Filter: f}
}

// TurnConnection is a page of one session's turns; totalCount is resolved through a loader.
type TurnConnection struct {
	Edges    []*TurnEdge
	PageInfo *PageInfo

	WorkspaceID string
	SessionID   string
}

// TurnConnectionFrom builds a page from up to page.Size+1 turns of one session, nearest the
// cursor first; rel resolves the relations of its turns (see Relations).
func TurnConnectionFrom(workspaceID, sessionID string, rows []forkengine.Turn, page Page, rel Relations) *TurnConnection {
	scope := TurnListScope(workspaceID, sessionID)
	rows, info := pageOf(rows, page, func(t forkengine.Turn) string { return TurnCursor(scope, t) })
	edges, edgeValues := make([]*TurnEdge, len(rows)), make([]TurnEdge, len(rows)) // one array, as for sessions
	for i, t := range rows {
		edgeValues[i] = TurnEdge{Cursor: TurnCursor(scope, t), Node: TurnFrom(t, rel)}
		edges[i] = &edgeValues[i]
	}
	return &TurnConnection{Edges: edges, PageInfo: info, WorkspaceID: workspaceID, SessionID: sessionID}
}

// WorkspaceEvent is the API view of one entry of the durable event log. The session, turn and
// operation it names are loaded as they are now; the status fields are as of the event.
type WorkspaceEvent struct {
	Cursor              string
	Kind                WorkspaceEventKind
	OccurredAt          time.Time
	SessionID           *string
	TurnID              *string
	ForkOperationID     *string
	ForkOperationStatus *ForkOperationStatus
	ForkOperationPhase  *ForkOperationPhase

	WorkspaceID string
}

// WorkspaceEventFrom builds the API view of an event.
func WorkspaceEventFrom(ev forkengine.Event) *WorkspaceEvent {
	view := &WorkspaceEvent{
		Cursor: EventCursor(ev.Cursor), Kind: EventKindFrom(ev.Kind), OccurredAt: ev.OccurredAt,
		SessionID: optional(ev.SessionID), TurnID: optional(ev.TurnID),
		ForkOperationID: optional(ev.OperationID), WorkspaceID: ev.WorkspaceID,
	}
	if ev.Status != "" {
		status, phase := PublicStatus(ev.Status)
		view.ForkOperationStatus, view.ForkOperationPhase = &status, &phase
	}
	return view
}
