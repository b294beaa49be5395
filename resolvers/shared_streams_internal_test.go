package resolvers

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/forkgraph/forkgraph/models"
)

// fakeMember is a group member whose "gqlgen" executes an event by reading it from out and
// rendering its cursor, counting executions.
type fakeMember struct {
	*sharedMember
	source     chan *models.WorkspaceEvent
	executions *atomic.Int64
	fail       bool // responses carry an error
}

func newFakeMember(g *sharedGroup, executions *atomic.Int64) *fakeMember {
	source := make(chan *models.WorkspaceEvent, 1024)
	return &fakeMember{sharedMember: &sharedMember{group: g, source: source, out: make(chan *models.WorkspaceEvent, 1)},
		source: source, executions: executions}
}

func (m *fakeMember) next(context.Context) *graphql.Response {
	ev, ok := <-m.out
	if !ok {
		return nil
	}
	m.executions.Add(1)
	resp := &graphql.Response{Data: []byte(fmt.Sprintf(`{"cursor":%q}`, ev.Cursor))}
	if m.fail {
		resp.Errors = gqlerror.List{{Message: "internal server error (request id of this member)"}}
	}
	return resp
}

func events(n int) []*models.WorkspaceEvent {
	evs := make([]*models.WorkspaceEvent, n)
	for i := range evs {
		evs[i] = &models.WorkspaceEvent{Cursor: fmt.Sprint("c", i)}
	}
	return evs
}

func TestSharedMembersExecuteEachEventOnce(t *testing.T) {
	t.Parallel()
	var s sharedStreams
	var executions atomic.Int64
	evs := events(50)
	var wg sync.WaitGroup
	members := make([]*fakeMember, 8)
	for i := range members {
		members[i] = newFakeMember(s.enter("k"), &executions)
		for _, ev := range evs {
			members[i].source <- ev
		}
	}
	got := make([][]string, len(members))
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range evs {
				got[i] = append(got[i], string(m.respond(context.Background(), m.next).Data))
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, len(evs), executions.Load(), "one execution per event for 8 members")
	for i := range members {
		require.Len(t, got[i], len(evs))
		for j, ev := range evs {
			require.Equal(t, fmt.Sprintf(`{"cursor":%q}`, ev.Cursor), got[i][j], "member %d, event %d: in order", i, j)
		}
	}
}

// A result is kept only until every member has taken it, and a group of one keeps none: distinct
// subscriptions by the thousand hold no responses.
func TestSharedResultsAreDroppedOnceTaken(t *testing.T) {
	t.Parallel()
	var s sharedStreams
	var executions atomic.Int64
	alone := newFakeMember(s.enter("alone"), &executions)
	for _, ev := range events(5) {
		alone.source <- ev
		alone.respond(context.Background(), alone.next)
	}
	require.Empty(t, alone.group.results)
	require.Nil(t, alone.group.latest.Load())

	members := []*fakeMember{newFakeMember(s.enter("k"), &executions), newFakeMember(s.enter("k"), &executions),
		newFakeMember(s.enter("k"), &executions)}
	for _, ev := range events(5) {
		for _, m := range members {
			m.source <- ev
			m.respond(context.Background(), m.next)
		}
	}
	require.EqualValues(t, 5+5, executions.Load())
	require.Empty(t, members[0].group.results, "every member took every result")
	require.Nil(t, members[0].group.latest.Load())
}

// A member that stops taking events (its client is slow) never holds up the others; a member
// further behind than the kept results executes on its own; the results kept stay bounded.
func TestSharedMemberThatStopsHoldsNobody(t *testing.T) {
	t.Parallel()
	var s sharedStreams
	var executions atomic.Int64
	stuck, going := newFakeMember(s.enter("k"), &executions), newFakeMember(s.enter("k"), &executions)
	evs := events(sharedResultsKept + 50)
	stuck.source <- evs[0]
	require.Equal(t, `{"cursor":"c0"}`, string(stuck.respond(context.Background(), stuck.next).Data))
	for _, ev := range evs {
		going.source <- ev
	}
	for _, ev := range evs {
		require.Equal(t, fmt.Sprintf(`{"cursor":%q}`, ev.Cursor), string(going.respond(context.Background(), going.next).Data))
	}
	require.EqualValues(t, len(evs), executions.Load())
	require.Len(t, going.group.results, sharedResultsKept)

	stuck.source <- evs[1] // long forgotten: it executes the event itself, as without sharing
	require.Equal(t, `{"cursor":"c1"}`, string(stuck.respond(context.Background(), stuck.next).Data))
	require.EqualValues(t, len(evs)+1, executions.Load())
}

// A response with errors is never shared: errors are presented per request (an internal error
// names the request's id), so every member executes such an event itself.
func TestSharedResponsesWithErrorsAreNotShared(t *testing.T) {
	t.Parallel()
	var s sharedStreams
	var executions atomic.Int64
	first, second := newFakeMember(s.enter("k"), &executions), newFakeMember(s.enter("k"), &executions)
	first.fail, second.fail = true, true
	ev := events(1)[0]
	first.source <- ev
	second.source <- ev
	a := first.respond(context.Background(), first.next)
	b := second.respond(context.Background(), second.next)
	require.NotSame(t, a, b)
	require.EqualValues(t, 2, executions.Load())
}

// The response handed to the group owns its data: gqlgen reuses its buffer for the member's next
// response.
func TestSharedResponseOwnsItsData(t *testing.T) {
	t.Parallel()
	var s sharedStreams
	s.enter("k") // another member, which will take the response later
	m := &sharedMember{group: s.enter("k"), out: make(chan *models.WorkspaceEvent, 1)}
	source := make(chan *models.WorkspaceEvent, 1)
	m.source = source
	buf := []byte(`{"a":1}`)
	source <- events(1)[0]
	resp := m.respond(context.Background(), func(context.Context) *graphql.Response {
		<-m.out
		return &graphql.Response{Data: buf}
	})
	copy(buf, `{"b":2}`)
	require.Equal(t, `{"a":1}`, string(resp.Data))
}

func TestSharedGroupLeaves(t *testing.T) {
	t.Parallel()
	var s sharedStreams
	g := s.enter("k")
	require.Same(t, g, s.enter("k"))
	other := s.enter("other")
	require.Equal(t, 2, s.groupCount())
	g.leave()
	require.Equal(t, 2, s.groupCount(), "a member leaving ends nobody else's membership")
	g.leave()
	other.leave()
	require.Equal(t, 0, s.groupCount(), "the last member out removes the group and its results")
	_, executes := g.result("c1")
	require.True(t, executes, "a member still finishing after the group ended executes on its own")
	require.Nil(t, g.results)
}

func TestShareKey(t *testing.T) {
	t.Parallel()
	op := func(query string, vars map[string]any) *graphql.OperationContext {
		doc, err := parser.ParseQuery(&ast.Source{Input: query})
		require.NoError(t, err)
		return &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: vars,
			OperationName: doc.Operations[0].Name}
	}
	const q = `subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor } }`
	key, ok := shareKey(op(q, map[string]any{"ws": "w"}), "w")
	require.True(t, ok)
	respaced, _ := shareKey(op("subscription ($ws: ID!) {\n workspaceEvents(workspaceId: $ws) {\n cursor # c\n }\n}", map[string]any{"ws": "w"}), "w")
	require.Equal(t, key, respaced, "canonical document: spacing and comments do not count")

	for name, other := range map[string]func() (string, bool){
		"another workspace": func() (string, bool) { return shareKey(op(q, map[string]any{"ws": "v"}), "v") },
		"another selection": func() (string, bool) {
			return shareKey(op(`subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor kind } }`, map[string]any{"ws": "w"}), "w")
		},
		"another operation name": func() (string, bool) {
			return shareKey(op(`subscription Named($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor } }`, map[string]any{"ws": "w"}), "w")
		},
		"more variables": func() (string, bool) { return shareKey(op(q, map[string]any{"ws": "w", "x": 1}), "w") },
	} {
		got, ok := other()
		require.True(t, ok, name)
		require.NotEqual(t, key, got, name)
	}

	for name, query := range map[string]string{
		"a query": `query($ws: ID!) { sessions(workspaceId: $ws) { edges { cursor } } }`,
		"@defer":  `subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { cursor ... @defer { kind } } }`,
		"@defer in a fragment": `subscription($ws: ID!) { workspaceEvents(workspaceId: $ws) { ...F } }
			fragment F on WorkspaceEvent { cursor ... on WorkspaceEvent @defer { kind } }`,
	} {
		_, ok := shareKey(op(query, map[string]any{"ws": "w"}), "w")
		require.False(t, ok, name)
	}
}

// A subscription's responses run under a cancellation of their own (so gqlgen's ctx.Err()
// per response is one hop, not a walk down every layer): it must end with the operation and
// with the stream, and a query's must not get one.
func TestSubscriptionResponsesGetTheirOwnCancellation(t *testing.T) {
	t.Parallel()
	opCtx := func(op ast.Operation) context.Context {
		return graphql.WithOperationContext(context.Background(),
			&graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: op}})
	}
	var inner context.Context
	capture := func(ctx context.Context) graphql.ResponseHandler {
		inner = ctx
		n := 0
		return func(context.Context) *graphql.Response {
			n++
			if n > 2 {
				return nil
			}
			return &graphql.Response{}
		}
	}

	// The stream ends: the responses' context ends, the operation's does not.
	base, cancel := context.WithCancel(opCtx(ast.Subscription))
	defer cancel()
	responses := withSharedSlot(base, capture)
	_, ok := inner.Value(sharedSlotKey{}).(*sharedSlot)
	require.True(t, ok)
	require.NotEqual(t, base.Done(), inner.Done(), "a cancellation right under the responses")
	require.NotNil(t, responses(inner))
	require.NotNil(t, responses(inner))
	require.NoError(t, inner.Err())
	require.Nil(t, responses(inner))
	require.ErrorIs(t, inner.Err(), context.Canceled)
	require.NoError(t, base.Err())

	// The operation ends: so do its responses.
	base2, cancel2 := context.WithCancel(opCtx(ast.Subscription))
	withSharedSlot(base2, capture)
	cancel2()
	require.ErrorIs(t, inner.Err(), context.Canceled)

	// A query keeps its context as it is.
	base3, cancel3 := context.WithCancel(opCtx(ast.Query))
	defer cancel3()
	withSharedSlot(base3, capture)
	require.Equal(t, base3.Done(), inner.Done())
}
