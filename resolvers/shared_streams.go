package resolvers

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/forkgraph/forkgraph/models"
	"github.com/forkgraph/forkgraph/streamside"
)

// Shared execution of live workspace subscriptions.
//
// Subscribers whose streams are live-only (forkengine's WorkspacePosition.Shareable) and whose
// operations give the same answer to the same event (same canonical document, operation name
// and variables, authorized for the same workspace) form a group. For each event, the first
// member to take it executes the selection (with that response's own, fresh loaders); the
// others get that response instead of executing the selection again, so the work of an event is
// proportional to the distinct subscriptions, not the subscribers. Nothing else is shared: each
// member still runs its own operation (authorization of its root field, rate limits, metrics,
// logs), follows its own engine stream (its own queue, its own RESUME_REQUIRED, its own end) and
// writes to its own connection. A member that finds no shared result for an event (it fell far
// behind, or the response that ran had errors, which are presented per request) executes it
// itself, exactly as without sharing.

// sharedResultsKept bounds the results a group keeps for members that have not taken them yet
// (a member leaves the group's count of them only by taking them); one further behind executes
// the event itself. A result every member has taken is dropped at once, and a group of one
// keeps nothing.
const sharedResultsKept = 256

// sharedStreams is the registry of groups, by share key.
type sharedStreams struct {
	mu     sync.Mutex
	groups map[string]*sharedGroup
}

// sharedGroup is the members of one share key and the results of the events they are sent.
type sharedGroup struct {
	key     string
	streams *sharedStreams

	// latest is the result of the newest event, read without the lock: thousands of members
	// take each event at once, and a mutex they all queue on hands itself from one to the next
	// through the scheduler.
	latest atomic.Pointer[sharedResult]

	mu      sync.Mutex
	members int
	results map[string]*sharedResult // by event cursor
	order   []string                 // cursors in arrival order, to forget the oldest
}

// sharedResult is one event's response, published once by the member that executed it.
type sharedResult struct {
	cursor string
	done   chan struct{}
	resp   *graphql.Response  // nil: not shareable; each member executes the event itself
	side   *streamside.Shared // resp, as the transports learn of it once for every member
	kept   bool               // in the group: other members may take it
	// waiting counts the members yet to take it; the last one drops it from the group.
	waiting atomic.Int32
}

// sharedMember is one operation's place in a group: it reads its engine stream (source) itself
// and hands gqlgen (out) only the events it executes.
type sharedMember struct {
	group  *sharedGroup
	side   *streamside.Stream // the operation's: told which responses are the group's
	source <-chan *models.WorkspaceEvent
	out    chan *models.WorkspaceEvent
	closed bool
}

// sharedSlot is one operation's sharing state (srv.AroundOperations): the resolver fills it in
// when the operation's stream joins a group, and shareResponses reads it for every response.
type sharedSlot struct{ member *sharedMember }

type sharedSlotKey struct{}

// withSharedSlot gives each operation its slot. A subscription's responses also get a
// cancellation of their own right under them: gqlgen's executor asks ctx.Err() before every
// response, and the operation's own cancellation is a dozen context layers further down
// (transport, tracing, telemetry, these slots), a walk through a cold object per layer for
// every subscriber of every event (5 % of a 10,000-subscriber fan-out's CPU). It ends with the
// operation, or with the stream (a nil response).
func withSharedSlot(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if !graphql.HasOperationContext(ctx) || graphql.GetOperationContext(ctx).Operation == nil ||
		graphql.GetOperationContext(ctx).Operation.Operation != ast.Subscription {
		return next(context.WithValue(ctx, sharedSlotKey{}, &sharedSlot{}))
	}
	ctx, cancel := context.WithCancel(ctx)
	responses := next(context.WithValue(ctx, sharedSlotKey{}, &sharedSlot{}))
	return func(ctx context.Context) *graphql.Response {
		resp := responses(ctx)
		if resp == nil {
			cancel()
		}
		return resp
	}
}

// join puts the operation whose root field ctx resolves into the group of its share key, when
// it has one, and returns the channel gqlgen reads instead of source. ok is false when the
// operation cannot share (no slot, not a plain subscription, @defer); the caller then streams
// source as it is.
func (s *sharedStreams) join(ctx context.Context, ws string, source <-chan *models.WorkspaceEvent) (<-chan *models.WorkspaceEvent, bool) {
	slot, _ := ctx.Value(sharedSlotKey{}).(*sharedSlot)
	if slot == nil || slot.member != nil || !graphql.HasOperationContext(ctx) {
		return nil, false
	}
	key, ok := shareKey(graphql.GetOperationContext(ctx), ws)
	if !ok {
		return nil, false
	}
	g := s.enter(key)
	m := &sharedMember{group: g, side: streamside.Of(ctx), source: source, out: make(chan *models.WorkspaceEvent, 1)}
	slot.member = m
	context.AfterFunc(ctx, g.leave)
	return m.out, true
}

// enter returns the group of key, made for its first member, with one more member.
func (s *sharedStreams) enter(key string) *sharedGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string]*sharedGroup{}
	}
	g := s.groups[key]
	if g == nil {
		g = &sharedGroup{key: key, streams: s, results: map[string]*sharedResult{}}
		s.groups[key] = g
	}
	g.mu.Lock()
	g.members++
	g.mu.Unlock()
	return g
}

// leave takes one member out; the last one out removes the group and its results.
func (g *sharedGroup) leave() {
	g.streams.mu.Lock()
	defer g.streams.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members--
	if g.members == 0 {
		delete(g.streams.groups, g.key)
		g.results, g.order = nil, nil
		g.latest.Store(nil)
	}
}

// groupCount is how many groups have members (for tests).
func (s *sharedStreams) groupCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.groups)
}

// result returns the result slot of the event at cursor and whether the caller is the member
// that executes it (the first to ask).
func (g *sharedGroup) result(cursor string) (*sharedResult, bool) {
	if r := g.latest.Load(); r != nil && r.cursor == cursor {
		return r, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.results[cursor]; ok {
		return r, false
	}
	r := &sharedResult{cursor: cursor, done: make(chan struct{})}
	if g.results == nil || g.members < 2 { // nobody to share with (every other member left)
		return r, true
	}
	r.kept = true
	r.waiting.Store(int32(g.members - 1))
	g.latest.Store(r)
	g.results[cursor] = r
	g.order = append(g.order, cursor)
	if len(g.order) > sharedResultsKept {
		delete(g.results, g.order[0])
		g.order = g.order[1:]
	}
	return r, true
}

// taken records that one more member has taken r; the last one drops it from the group.
func (g *sharedGroup) taken(r *sharedResult) {
	if r.waiting.Add(-1) != 0 {
		return
	}
	g.latest.CompareAndSwap(r, nil)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.results[r.cursor] == r {
		delete(g.results, r.cursor)
	}
}

// publish makes shared (nil: not shareable) the event's result.
func (r *sharedResult) publish(shared *streamside.Shared) {
	if shared != nil {
		r.resp, r.side = shared.Response(), shared
	}
	close(r.done)
}

// shareResponses (srv.AroundResponses) answers each event of a member of a group: with the
// group's result when another member has executed the event, else by executing it and, when
// the response is shareable, publishing it to the group.
func shareResponses(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	slot, _ := ctx.Value(sharedSlotKey{}).(*sharedSlot)
	if slot == nil || slot.member == nil {
		return next(ctx)
	}
	return slot.member.respond(ctx, next)
}

func (m *sharedMember) respond(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	// The transport asks for a response when the stream has one ready, and the member that
	// executes an event has usually published it by then: each wait tries without blocking
	// first, which spares a select over two cold channels per member and event.
	v, ok, got := tryReceive(m.source)
	if !got {
		select {
		case v, ok = <-m.source:
		case <-ctx.Done():
			return nil
		}
	}
	if !ok { // the engine stream ended: gqlgen sees the end, endStreamWithError its reason
		if !m.closed {
			m.closed = true
			close(m.out)
		}
		return next(ctx)
	}
	ev := v
	r, executes := m.group.result(ev.Cursor)
	if !executes {
		if _, _, done := tryReceive(r.done); !done {
			select {
			case <-r.done:
			case <-ctx.Done():
				return nil
			}
		}
		m.group.taken(r)
		if r.resp != nil {
			m.side.Responded(r.side)
			return r.resp
		}
	}
	m.side.Responded(nil)
	return m.execute(ctx, next, ev, r, executes)
}

// tryReceive receives from c if that does not wait; got reports whether it did.
func tryReceive[T any](c <-chan T) (v T, ok, got bool) {
	select {
	case v, ok = <-c:
		return v, ok, true
	default:
		return v, false, false
	}
}

// execute runs the selection for ev with gqlgen; when publish is set it makes the response the
// group's result for ev, or tells the waiting members to execute it themselves when it cannot be
// shared: a response with errors (they are presented per request: an internal error names the
// request's id) or extensions, or one cut short because this member left.
func (m *sharedMember) execute(ctx context.Context, next graphql.ResponseHandler, ev *models.WorkspaceEvent, r *sharedResult, publish bool) *graphql.Response {
	var shared *streamside.Shared
	if publish {
		defer func() { r.publish(shared) }() // also on a panic: the others must not wait for ever
	}
	select {
	case m.out <- ev:
	case <-ctx.Done():
		return nil
	}
	resp := next(ctx)
	if !publish || !r.kept || resp == nil || ctx.Err() != nil || len(resp.Errors) > 0 || len(resp.Extensions) > 0 {
		return resp
	}
	// The executor reuses its buffer for the operation's next response: the shared one owns a copy.
	copied := *resp
	copied.Data = bytes.Clone(resp.Data)
	shared = streamside.NewShared(&copied)
	m.side.Responded(shared)
	return shared.Response()
}

// shareKey is what makes two operations give the same answer to the same event: the canonical
// document (formatted, so spacing and comments do not matter), the operation's name, its
// variables, and the authorization scope. Workspace authorization is all there is to a caller's
// scope (Authorizer: may this caller use workspace ws?), and every member has passed it for ws
// before joining, so ws is the scope. ok is false for an operation that cannot share: not a
// subscription, or one that defers (its responses come in parts).
func shareKey(opCtx *graphql.OperationContext, ws string) (string, bool) {
	if opCtx == nil || opCtx.Doc == nil || opCtx.Operation == nil || opCtx.Operation.Operation != ast.Subscription {
		return "", false
	}
	if defers(opCtx.Doc, opCtx.Operation.SelectionSet, map[string]bool{}) {
		return "", false
	}
	vars, err := json.Marshal(opCtx.Variables) // map keys sorted: canonical
	if err != nil {
		return "", false
	}
	var doc strings.Builder
	formatter.NewFormatter(&doc).FormatQueryDocument(opCtx.Doc)
	return strings.Join([]string{ws, opCtx.OperationName, string(vars), doc.String()}, "\x00"), true
}

// defers reports whether set, with the fragments it spreads, uses @defer.
func defers(doc *ast.QueryDocument, set ast.SelectionSet, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Directives.ForName("defer") != nil || defers(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("defer") != nil || defers(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("defer") != nil {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := doc.Fragments.ForName(s.Name); f != nil && defers(doc, f.SelectionSet, seen) {
				return true
			}
		}
	}
	return false
}
