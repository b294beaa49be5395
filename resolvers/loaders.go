package resolvers

import (
	"context"
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// key names one row of one workspace. Loader keys carry the workspace so one response may read
// several workspaces (in open mode) without mixing them.
type key struct{ ws, id string }

// pageKey names one page of one session's turns; pages with the same arguments are read together.
// sequence is the page's cursor: after it (forward) or before it (backward); 0 is the list's end.
type pageKey struct {
	ws, sessionID string
	page          models.Page
	sequence      int64
}

// loaders is the set of batched reads of one response. It is built fresh for every response (a
// query, a mutation, or one event of a subscription) that reads through a loader (withLoaders),
// and for every root field of a mutation (mutationFieldLoaders), so nothing is cached
// across responses, a subscription event always sees the data as it is when the event is sent,
// and a mutation field sees what the fields before it wrote.
type loaders struct {
	engine *forkengine.Engine
	views  *viewRelations // the Relations of the views this response builds

	sessions     *relation[key, forkengine.Session]
	turns        *relation[key, forkengine.Turn]
	latestTurn   *relation[key, forkengine.Turn]
	activeTurn   *relation[key, forkengine.Turn]
	turnPages    *relation[pageKey, []forkengine.Turn]
	turnCounts   *relation[key, int]
	turnMessages *relation[key, []forkengine.Message]
	messages     *relation[key, forkengine.Message] // by message id: node(id:)
	// interactions by interaction id (node(id:)), turnInteractions by turn (Turn.interactions).
	interactions     *relation[key, forkengine.Interaction]
	turnInteractions *relation[key, []forkengine.Interaction]
	// audits by audit message id (node(id:)), sessionAudits by session (Session.auditMessages).
	audits         *relation[key, forkengine.AuditMessage]
	sessionAudits  *relation[key, []forkengine.AuditMessage]
	transcripts    *relation[key, []forkengine.Message]
	forkedFrom     *relation[key, forkengine.Lineage]
	forks          *relation[key, []forkengine.Lineage]
	operations     *relation[key, forkengine.ForkOperation]
	committed      *relation[key, committedResult]
	committedOpsMu sync.Mutex
	committedOps   map[key]forkengine.ForkOperation // operations whose committed result was asked for
	forkability    *relation[key, bool]
	pending        *relation[key, forkengine.ForkOperation] // by turn: Turn.pendingForkOperation
	capabilities   *relation[key, forkengine.LifecycleCapabilities]
	probeTurnsMu   sync.Mutex
	probeTurns     map[key]forkengine.Turn // every turn of the response, for forkability probes
	pageSessionsMu sync.Mutex
	pageSessions   map[string][]string // sessions seen per workspace, to batch turn pages
	lists          listLoaders         // the paged lists (loaders_lists.go)
	sessionHints   *hintSet[key]       // every session the response read (sawSessions)
	turnHints      *hintSet[key]       // every turn the response read (sawTurns)
}

type loadersKey struct{}

// responseLoaders is the loader slot of one response. The loader set is built on the first
// lookup, not when the response starts: a subscription event whose selection is all scalars (the
// common case, sent to every subscriber of a workspace) then builds none, and that was most of
// the CPU and garbage of a fan-out. Building lazily changes nothing else: the set still belongs
// to this one response and is dropped with it, so no read is cached across responses.
type responseLoaders struct {
	ctx  context.Context // the response's
	with loaderSources
	once sync.Once
	set  *loaders
}

func (r *responseLoaders) get() *loaders {
	r.once.Do(func() { r.set = newLoaders(r.ctx, r.with) })
	return r.set
}

// loaderSources are what every response's loaders read from.
type loaderSources struct {
	engine *forkengine.Engine
	batch  BatchObserver
	narrow NarrowReads // nil: rows are always read whole
}

// withLoaders gives each response its own (lazily built) loader set. It is registered with
// srv.AroundResponses, not as HTTP middleware: a websocket is one HTTP request for its whole life,
// and per-request loaders would serve every subscription event from the first event's cache.
func withLoaders(with loaderSources) graphql.ResponseMiddleware {
	return func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		slot := &responseLoaders{with: with}
		slot.ctx = context.WithValue(ctx, loadersKey{}, slot)
		return next(slot.ctx)
	}
}

// mutationFieldLoaders gives each root field of a mutation a loader set of its own. A mutation's
// root fields run one after another and each must see what the ones before it wrote (GraphQL's
// serial execution); with one set for the whole response, a later field got what an earlier one
// had read: b's session.latestTurn was the turn as it stood before b settled it, and b's own turn
// not forkable. A root field's selection is resolved within the field, so its set is dropped
// with it; queries and subscription events keep one set per response.
//
// It wraps the root field middleware of mutations only, as an operation context mutator: as a
// root field interceptor (srv.AroundRootFields) it was a layer of every root field, and the
// frames it added to a subscription's start, which runs on the websocket's reader goroutine,
// doubled that goroutine's stack (4 to 8 KiB) for as long as the connection lives.
type mutationFieldLoaders struct{}

var (
	_ graphql.HandlerExtension        = mutationFieldLoaders{}
	_ graphql.OperationContextMutator = mutationFieldLoaders{}
)

// ExtensionName names the extension to gqlgen.
func (mutationFieldLoaders) ExtensionName() string { return "forkgraph mutation field loaders" }

// Validate accepts every schema.
func (mutationFieldLoaders) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext puts a fresh loader slot in front of each root field of a mutation.
func (mutationFieldLoaders) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
		return nil
	}
	inner := oc.RootResolverMiddleware
	oc.RootResolverMiddleware = func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
		if slot, ok := ctx.Value(loadersKey{}).(*responseLoaders); ok {
			fresh := &responseLoaders{with: slot.with}
			fresh.ctx = context.WithValue(ctx, loadersKey{}, fresh)
			ctx = fresh.ctx
		}
		if inner == nil {
			return next(ctx)
		}
		return inner(ctx, next)
	}
	return nil
}

// LoaderNames are the names newLoaders gives its relations, the loader label of the batches
// Config.Batch observes (telemetry exports forkgraph_dataloader_batch_size for each from the start).
var LoaderNames = []string{"sessions", "turns", "latestTurn", "activeTurn", "turnPages", "turnCounts", "turnMessages",
	"messages", "transcripts", "forkedFrom", "forks", "operations", "committed", "forkability", "pending", "capabilities",
	"transcriptPages", "transcriptCounts", "turnMessagePages", "turnMessageCounts", "forkPages", "forkCounts",
	"interactions", "turnInteractions", "audits", "sessionAudits"}

func newLoaders(ctx context.Context, with loaderSources) *loaders {
	engine, batch, rd := with.engine, with.batch, with.engine.Reader()
	l := &loaders{engine: engine, probeTurns: map[key]forkengine.Turn{}, pageSessions: map[string][]string{},
		committedOps: map[key]forkengine.ForkOperation{}}
	l.views = &viewRelations{ctx: ctx, l: l}
	l.sessions = newRelation(batch, "sessions", func(ctx context.Context, keys []key) (map[key]forkengine.Session, error) {
		m, err := byWorkspace(ctx, keys, rd.SessionsByIDs)
		l.sawSessions(values(m))
		return m, err
	})
	l.turns = newRelation(batch, "turns", l.turnReader(rd.TurnsByIDs))
	l.latestTurn = newRelation(batch, "latestTurn", l.turnReader(rd.LatestTurnsBySessionIDs))
	l.activeTurn = newRelation(batch, "activeTurn", l.turnReader(rd.ActiveTurnsBySessionIDs))
	l.turnPages = newRelation(batch, "turnPages", l.readTurnPages)
	l.turnCounts = newRelation(batch, "turnCounts", func(ctx context.Context, keys []key) (map[key]int, error) {
		return byWorkspace(ctx, keys, rd.CountTurnsBySessionIDs)
	})
	l.turnMessages = newRelation(batch, "turnMessages", func(ctx context.Context, keys []key) (map[key][]forkengine.Message, error) {
		// The deprecated whole list refuses more than MaxListLength messages, so it reads one more
		// than that per turn and no further (a page cut in SQL), not the whole turn: its narrow
		// read (role and content alone) too.
		if with.narrow != nil && showsOnly(ctx, "Message", messageTextFields) {
			return byWorkspace(ctx, keys, func(ctx context.Context, ws string, ids []string) (map[string][]forkengine.Message, error) {
				return with.narrow.MessageTextsByTurnIDs(ctx, ws, ids, MaxListLength+1)
			})
		}
		return byWorkspace(ctx, keys, func(ctx context.Context, ws string, ids []string) (map[string][]forkengine.Message, error) {
			return rd.TurnMessagesAfter(ctx, ws, ids, 0, MaxListLength+1)
		})
	})
	l.messages = newRelation(batch, "messages", func(ctx context.Context, keys []key) (map[key]forkengine.Message, error) {
		return byWorkspace(ctx, keys, rd.MessagesByIDs)
	})
	l.interactions = newRelation(batch, "interactions", func(ctx context.Context, keys []key) (map[key]forkengine.Interaction, error) {
		return byWorkspace(ctx, keys, rd.InteractionsByIDs)
	})
	l.turnInteractions = newRelation(batch, "turnInteractions", func(ctx context.Context, keys []key) (map[key][]forkengine.Interaction, error) {
		return byWorkspace(ctx, keys, rd.InteractionsByTurnIDs)
	})
	l.audits = newRelation(batch, "audits", func(ctx context.Context, keys []key) (map[key]forkengine.AuditMessage, error) {
		return byWorkspace(ctx, keys, rd.AuditMessagesByIDs)
	})
	l.sessionAudits = newRelation(batch, "sessionAudits", func(ctx context.Context, keys []key) (map[key][]forkengine.AuditMessage, error) {
		return byWorkspace(ctx, keys, rd.AuditMessagesBySessionIDs)
	})
	l.transcripts = newRelation(batch, "transcripts", l.readTranscripts)
	l.forkedFrom = newRelation(batch, "forkedFrom", func(ctx context.Context, keys []key) (map[key]forkengine.Lineage, error) {
		read := rd.LineagesByTargetIDs
		if with.narrow != nil && showsOnly(ctx, "Lineage", lineageEndFields) {
			read = with.narrow.LineageEndsByTargetIDs
		}
		m, err := byWorkspace(ctx, keys, read)
		l.sawLineages(values(m))
		return m, err
	})
	l.forks = newRelation(batch, "forks", func(ctx context.Context, keys []key) (map[key][]forkengine.Lineage, error) {
		m, err := byWorkspace(ctx, keys, func(ctx context.Context, ws string, ids []string) (map[string][]forkengine.Lineage, error) {
			// One more than the deprecated list may hold: Session.forks refuses that many.
			return rd.LineagesBySourceIDsAfter(ctx, ws, ids, forkengine.PageCursor{}, MaxListLength+1)
		})
		for _, ls := range m {
			l.sawLineages(ls)
		}
		return m, err
	})
	l.operations = newRelation(batch, "operations", func(ctx context.Context, keys []key) (map[key]forkengine.ForkOperation, error) {
		m, err := byWorkspace(ctx, keys, rd.OperationsByIDs)
		l.sawOperations(values(m))
		return m, err
	})
	l.committed = newRelation(batch, "committed", l.readCommitted)
	l.forkability = newRelation(batch, "forkability", l.probe)
	l.pending = newRelation(batch, "pending", l.readPending)
	l.capabilities = newRelation(batch, "capabilities", l.describe)
	l.sessionHints, l.turnHints = newHintSet[key](), newHintSet[key]()
	l.newListLoaders(batch)
	for _, r := range []*relation[key, forkengine.Turn]{l.latestTurn, l.activeTurn} {
		r.follow(l.sessionHints)
	}
	l.turnCounts.follow(l.sessionHints)
	l.transcripts.follow(l.sessionHints)
	l.sessionAudits.follow(l.sessionHints)
	l.forkedFrom.follow(l.sessionHints)
	l.forks.follow(l.sessionHints)
	l.capabilities.follow(l.sessionHints)
	l.turnMessages.follow(l.turnHints)
	l.turnInteractions.follow(l.turnHints)
	l.forkability.follow(l.turnHints)
	l.pending.follow(l.turnHints)
	return l
}

// turnReader wraps a batch read of turns so every turn read is remembered for its children.
func (l *loaders) turnReader(read func(ctx context.Context, ws string, ids []string) (map[string]forkengine.Turn, error)) func(context.Context, []key) (map[key]forkengine.Turn, error) {
	return func(ctx context.Context, keys []key) (map[key]forkengine.Turn, error) {
		m, err := byWorkspace(ctx, keys, read)
		l.sawTurns(values(m))
		return m, err
	}
}

// byWorkspace runs one batch read per workspace (one in practice) and keys the result by (ws, id).
func byWorkspace[V any](ctx context.Context, keys []key, read func(ctx context.Context, ws string, ids []string) (map[string]V, error)) (map[key]V, error) {
	ids := map[string][]string{}
	var order []string
	for _, k := range keys {
		if _, ok := ids[k.ws]; !ok {
			order = append(order, k.ws)
		}
		ids[k.ws] = append(ids[k.ws], k.id)
	}
	out := make(map[key]V, len(keys))
	for _, ws := range order {
		m, err := read(ctx, ws, ids[ws])
		if err != nil {
			return nil, fmt.Errorf("batch read in workspace %s: %w", ws, err)
		}
		for id, v := range m {
			out[key{ws, id}] = v
		}
	}
	return out, nil
}

func values[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
