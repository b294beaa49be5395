package resolvers

import (
	"context"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// The loaders of the paged lists (Session.messagesConnection, Turn.messagesConnection,
// Session.forksConnection) and of the deprecated whole lists they replace. A page is keyed, like
// a turns page, by its owner and its window; every owner the response has seen is hinted with the
// same window, so a list of 100 sessions' connections is one statement per distinct window, not
// 100 (TestBatchingListConnections counts them).

// MaxListLength is the most rows the deprecated whole-list fields (Session.messages,
// Turn.messages, Session.forks) return: a longer list is refused with BAD_USER_INPUT reason
// list_too_long, and the client pages through the field's connection instead.
const MaxListLength = 1_000

// ReasonListTooLong is the reason of a whole list longer than MaxListLength.
const ReasonListTooLong = "list_too_long"

// transcriptPageKey names one page of one session's transcript.
type transcriptPageKey struct {
	ws, sessionID string
	page          models.Page
	cursor        forkengine.MessageCursor
}

// turnMessagePageKey names one page of one turn's messages; position is the cursor's.
type turnMessagePageKey struct {
	ws, turnID string
	page       models.Page
	position   int64
}

// forkPageKey names one page of one session's forks.
type forkPageKey struct {
	ws, sessionID string
	page          models.Page
	cursor        forkengine.PageCursor
}

// listLoaders are the relations of the paged lists, part of every response's loaders.
type listLoaders struct {
	transcriptPages   *relation[transcriptPageKey, []forkengine.TranscriptMessage]
	transcriptCounts  *relation[key, int]
	turnMessagePages  *relation[turnMessagePageKey, []forkengine.Message]
	turnMessageCounts *relation[key, int]
	forkPages         *relation[forkPageKey, []forkengine.Lineage]
	forkCounts        *relation[key, int]
}

func (l *loaders) newListLoaders(batch BatchObserver) {
	rd := l.engine.Reader()
	l.lists.transcriptPages = newRelation(batch, "transcriptPages", l.readTranscriptPages)
	l.lists.transcriptCounts = newRelation(batch, "transcriptCounts", func(ctx context.Context, keys []key) (map[key]int, error) {
		return byWorkspace(ctx, keys, rd.CountSessionMessages)
	})
	l.lists.turnMessagePages = newRelation(batch, "turnMessagePages", l.readTurnMessagePages)
	l.lists.turnMessageCounts = newRelation(batch, "turnMessageCounts", func(ctx context.Context, keys []key) (map[key]int, error) {
		return byWorkspace(ctx, keys, rd.CountTurnMessages)
	})
	l.lists.forkPages = newRelation(batch, "forkPages", l.readForkPages)
	l.lists.forkCounts = newRelation(batch, "forkCounts", func(ctx context.Context, keys []key) (map[key]int, error) {
		return byWorkspace(ctx, keys, rd.CountLineagesBySourceIDs)
	})
	l.lists.transcriptCounts.follow(l.sessionHints)
	l.lists.forkCounts.follow(l.sessionHints)
	l.lists.turnMessageCounts.follow(l.turnHints)
}

// seenSessions are the sessions of workspace ws the response has read (sawSessions).
func (l *loaders) seenSessions(ws string) []string {
	l.pageSessionsMu.Lock()
	defer l.pageSessionsMu.Unlock()
	return append([]string(nil), l.pageSessions[ws]...)
}

// seenTurns are the turns of workspace ws the response has read (sawTurns).
func (l *loaders) seenTurns(ws string) []string {
	l.probeTurnsMu.Lock()
	defer l.probeTurnsMu.Unlock()
	var out []string
	for k := range l.probeTurns {
		if k.ws == ws {
			out = append(out, k.id)
		}
	}
	return out
}

// transcriptPage returns up to page.Size+1 messages of a session's transcript from the cursor,
// nearest it first, read in one batch with every session the response has seen.
func (l *loaders) transcriptPage(ctx context.Context, ws, sessionID string, page models.Page, c forkengine.MessageCursor) ([]forkengine.TranscriptMessage, error) {
	seen := l.seenSessions(ws)
	siblings := make([]transcriptPageKey, len(seen))
	for i, id := range seen {
		siblings[i] = transcriptPageKey{ws, id, page, c}
	}
	l.lists.transcriptPages.hint(siblings...)
	rows, _, err := l.lists.transcriptPages.load(ctx, transcriptPageKey{ws, sessionID, page, c})
	return rows, err
}

func (l *loaders) readTranscriptPages(ctx context.Context, keys []transcriptPageKey) (map[transcriptPageKey][]forkengine.TranscriptMessage, error) {
	type args struct {
		ws     string
		page   models.Page
		cursor forkengine.MessageCursor
	}
	groups := map[args][]string{}
	for _, k := range keys {
		a := args{k.ws, k.page, k.cursor}
		groups[a] = append(groups[a], k.sessionID)
	}
	out := make(map[transcriptPageKey][]forkengine.TranscriptMessage, len(keys))
	for a, ids := range groups {
		read, c := l.engine.Reader().SessionMessagesAfter, a.cursor
		if a.page.Backward {
			read = l.engine.Reader().SessionMessagesBefore
			if c == (forkengine.MessageCursor{}) {
				c = forkengine.TranscriptEnd
			}
		}
		m, err := read(ctx, a.ws, ids, c, a.page.Size+1)
		if err != nil {
			return nil, fmt.Errorf("transcript pages: %w", err)
		}
		for _, id := range ids {
			out[transcriptPageKey{a.ws, id, a.page, a.cursor}] = m[id]
		}
	}
	return out, nil
}

// turnMessagePage returns up to page.Size+1 messages of a turn from the cursor's position,
// nearest it first, read in one batch with every turn the response has seen.
func (l *loaders) turnMessagePage(ctx context.Context, ws, turnID string, page models.Page, position int64) ([]forkengine.Message, error) {
	seen := l.seenTurns(ws)
	siblings := make([]turnMessagePageKey, len(seen))
	for i, id := range seen {
		siblings[i] = turnMessagePageKey{ws, id, page, position}
	}
	l.lists.turnMessagePages.hint(siblings...)
	rows, _, err := l.lists.turnMessagePages.load(ctx, turnMessagePageKey{ws, turnID, page, position})
	return rows, err
}

func (l *loaders) readTurnMessagePages(ctx context.Context, keys []turnMessagePageKey) (map[turnMessagePageKey][]forkengine.Message, error) {
	type args struct {
		ws       string
		page     models.Page
		position int64
	}
	groups := map[args][]string{}
	for _, k := range keys {
		a := args{k.ws, k.page, k.position}
		groups[a] = append(groups[a], k.turnID)
	}
	out := make(map[turnMessagePageKey][]forkengine.Message, len(keys))
	for a, ids := range groups {
		read := l.engine.Reader().TurnMessagesAfter
		if a.page.Backward {
			read = l.engine.Reader().TurnMessagesBefore
		}
		m, err := read(ctx, a.ws, ids, a.position, a.page.Size+1)
		if err != nil {
			return nil, fmt.Errorf("turn message pages: %w", err)
		}
		for _, id := range ids {
			out[turnMessagePageKey{a.ws, id, a.page, a.position}] = m[id]
		}
	}
	return out, nil
}

// forkPage returns up to page.Size+1 forks of a session from the cursor, nearest it first, read
// in one batch with every session the response has seen.
func (l *loaders) forkPage(ctx context.Context, ws, sessionID string, page models.Page, c forkengine.PageCursor) ([]forkengine.Lineage, error) {
	seen := l.seenSessions(ws)
	siblings := make([]forkPageKey, len(seen))
	for i, id := range seen {
		siblings[i] = forkPageKey{ws, id, page, c}
	}
	l.lists.forkPages.hint(siblings...)
	rows, _, err := l.lists.forkPages.load(ctx, forkPageKey{ws, sessionID, page, c})
	return rows, err
}

func (l *loaders) readForkPages(ctx context.Context, keys []forkPageKey) (map[forkPageKey][]forkengine.Lineage, error) {
	type args struct {
		ws     string
		page   models.Page
		cursor forkengine.PageCursor
	}
	groups := map[args][]string{}
	for _, k := range keys {
		a := args{k.ws, k.page, k.cursor}
		groups[a] = append(groups[a], k.sessionID)
	}
	out := make(map[forkPageKey][]forkengine.Lineage, len(keys))
	for a, ids := range groups {
		read := l.engine.Reader().LineagesBySourceIDsAfter
		if a.page.Backward {
			read = l.engine.Reader().LineagesBySourceIDsBefore
		}
		m, err := read(ctx, a.ws, ids, a.cursor, a.page.Size+1)
		if err != nil {
			return nil, fmt.Errorf("fork pages: %w", err)
		}
		for _, id := range ids {
			out[forkPageKey{a.ws, id, a.page, a.cursor}] = m[id]
			l.sawLineages(m[id])
		}
	}
	return out, nil
}

// listTooLong is the error of a deprecated whole list with more than MaxListLength rows.
func listTooLong(list, connection string) error {
	return forkengine.ReasonErrorf(forkengine.CodeInvalid, ReasonListTooLong,
		"%s has more than %d entries; page through %s instead", list, MaxListLength, connection)
}
