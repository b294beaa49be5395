package resolvers

import (
	"context"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// The saw* methods hint, for rows the response just read, the relations their children will ask
// for. This is what makes a list's children one batch each (see relation).

func (l *loaders) sawSessions(sessions []forkengine.Session) {
	keys := make([]key, len(sessions))
	l.pageSessionsMu.Lock()
	for i, s := range sessions {
		keys[i] = key{s.WorkspaceID, s.ID}
		l.pageSessions[s.WorkspaceID] = append(l.pageSessions[s.WorkspaceID], s.ID)
	}
	l.pageSessionsMu.Unlock()
	l.sessionHints.add(keys...) // followed by every relation keyed by session (newLoaders)
}

func (l *loaders) sawTurns(turns []forkengine.Turn) {
	keys := make([]key, len(turns))
	sessions := make([]key, len(turns))
	l.probeTurnsMu.Lock()
	if len(l.probeTurns) == 0 {
		l.probeTurns = make(map[key]forkengine.Turn, len(turns)) // the first read (a page's) sizes it
	}
	for i, t := range turns {
		keys[i], sessions[i] = key{t.WorkspaceID, t.ID}, key{t.WorkspaceID, t.SessionID}
		l.probeTurns[keys[i]] = t
	}
	l.probeTurnsMu.Unlock()
	l.turnHints.add(keys...) // followed by turnMessages, forkability and pending
	l.sessions.hint(sessions...)
}

func (l *loaders) sawLineages(lineages []forkengine.Lineage) {
	for _, ln := range lineages {
		l.sessions.hint(key{ln.WorkspaceID, ln.SourceSessionID}, key{ln.WorkspaceID, ln.TargetSessionID})
		if ln.SourceTurnID != "" { // a narrow read (LineageEndsByTargetIDs) has no turns: none is shown
			l.turns.hint(key{ln.WorkspaceID, ln.SourceTurnID}, key{ln.WorkspaceID, ln.TargetTurnID})
		}
	}
}

func (l *loaders) sawOperations(ops []forkengine.ForkOperation) {
	for _, op := range ops {
		l.sessions.hint(key{op.WorkspaceID, op.SourceSessionID})
		l.turns.hint(key{op.WorkspaceID, op.ThroughTurnID})
		if op.Status == forkengine.StatusCommitted {
			// The committed projection of every listed operation rides the first batch, however
			// the resolvers of their session and lineage fields are scheduled.
			k := key{op.WorkspaceID, op.ID}
			l.committedOpsMu.Lock()
			l.committedOps[k] = op
			l.committedOpsMu.Unlock()
			l.committed.hint(k)
		}
	}
}

// primeSessions records sessions a root field already read (a listed page, a mutation result).
func (l *loaders) primeSessions(sessions ...forkengine.Session) {
	m := make(map[key]forkengine.Session, len(sessions))
	for _, s := range sessions {
		m[key{s.WorkspaceID, s.ID}] = s
	}
	l.sessions.prime(m)
	l.sawSessions(sessions)
}

// primeTurns records turns a resolver already holds, so their sessions and forkability batch too.
func (l *loaders) primeTurns(turns ...forkengine.Turn) {
	m := make(map[key]forkengine.Turn, len(turns))
	for _, t := range turns {
		m[key{t.WorkspaceID, t.ID}] = t
	}
	l.turns.prime(m)
	l.sawTurns(turns)
}

// readTurnPages reads pages of turns, one statement per distinct page window (size, direction,
// cursor). It asks for one extra turn per session so the page knows whether it was cut short.
func (l *loaders) readTurnPages(ctx context.Context, keys []pageKey) (map[pageKey][]forkengine.Turn, error) {
	type args struct {
		ws       string
		page     models.Page
		sequence int64
	}
	groups := map[args][]string{}
	for _, k := range keys {
		a := args{k.ws, k.page, k.sequence}
		groups[a] = append(groups[a], k.sessionID)
	}
	out := map[pageKey][]forkengine.Turn{}
	for a, ids := range groups {
		read := l.engine.Reader().TurnsBySessionIDs
		if a.page.Backward {
			read = l.engine.Reader().TurnsBySessionIDsBefore
		}
		m, err := read(ctx, a.ws, ids, a.sequence, a.page.Size+1)
		if err != nil {
			return nil, fmt.Errorf("turn pages: %w", err)
		}
		for _, id := range ids {
			out[pageKey{a.ws, id, a.page, a.sequence}] = m[id]
			l.sawTurns(m[id])
		}
	}
	return out, nil
}

// readTranscripts reads the deprecated whole transcripts of Session.messages: the first
// MaxListLength+1 messages of each through the paged read, so a transcript too long to return is
// refused after reading one row more than the list may hold, never the whole of it.
func (l *loaders) readTranscripts(ctx context.Context, keys []key) (map[key][]forkengine.Message, error) {
	pages, err := byWorkspace(ctx, keys, func(ctx context.Context, ws string, ids []string) (map[string][]forkengine.TranscriptMessage, error) {
		return l.engine.Reader().SessionMessagesAfter(ctx, ws, ids, forkengine.MessageCursor{}, MaxListLength+1)
	})
	if err != nil {
		return nil, fmt.Errorf("transcripts: %w", err)
	}
	out := make(map[key][]forkengine.Message, len(pages))
	for k, rows := range pages {
		msgs := make([]forkengine.Message, len(rows))
		for i, m := range rows {
			msgs[i] = m.Message
		}
		out[k] = msgs
	}
	return out, nil
}

// probe answers providerForkBindingAvailable for every turn of the response at once: the engine
// sends one ProbeTurns call per provider.
func (l *loaders) probe(ctx context.Context, keys []key) (map[key]bool, error) {
	l.probeTurnsMu.Lock()
	queries := make([]forkengine.ForkabilityQuery, 0, len(keys)) // a query holds a session and a turn: grow once
	asked := make([]key, 0, len(keys))
	sessionKeys := make([]key, 0, len(keys))
	for _, k := range keys {
		if t, ok := l.probeTurns[k]; ok {
			asked = append(asked, k)
			queries = append(queries, forkengine.ForkabilityQuery{Turn: t})
			sessionKeys = append(sessionKeys, key{t.WorkspaceID, t.SessionID})
		}
	}
	l.probeTurnsMu.Unlock()
	sessions, err := l.sessions.getMany(ctx, sessionKeys)
	if err != nil {
		return nil, fmt.Errorf("forkability sessions: %w", err)
	}
	out := make(map[key]bool, len(keys))
	known, knownKeys := queries[:0], asked[:0] // filtered in place: a query is a session and a turn
	for i, q := range queries {
		if s, ok := sessions[sessionKeys[i]]; ok { // a turn without its session is not forkable
			q.Session = s
			known, knownKeys = append(known, q), append(knownKeys, asked[i])
		}
	}
	for i, available := range l.engine.TurnForkability(ctx, known) {
		out[knownKeys[i]] = available
	}
	return out, nil
}

// describe resolves lifecycle capabilities from each session's driver descriptor.
func (l *loaders) describe(ctx context.Context, keys []key) (map[key]forkengine.LifecycleCapabilities, error) {
	sessions, err := l.sessions.getMany(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("capabilities sessions: %w", err)
	}
	ordered := make([]forkengine.Session, 0, len(sessions))
	for _, k := range keys {
		if s, ok := sessions[k]; ok {
			ordered = append(ordered, s)
		}
	}
	out := make(map[key]forkengine.LifecycleCapabilities, len(ordered))
	for i, c := range l.engine.Capabilities(ctx, ordered) {
		out[key{ordered[i].WorkspaceID, ordered[i].ID}] = c
	}
	return out, nil
}
