package streamside_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/forkgraph/forkgraph/streamside"
)

// An operation without a Stream (no resolving layer made one) reads as one that cannot tell:
// no readiness, no final error, every response checked on its own.
func TestNoStreamKnowsNothing(t *testing.T) {
	s := streamside.Of(context.Background())
	require.Nil(t, s)
	require.False(t, s.SetReady(func(func()) bool { return true }))
	require.Nil(t, s.Ready())
	s.End(&gqlerror.Error{Message: "x"})
	require.Empty(t, s.Err())
	s.Responded(nil)
	require.True(t, s.ValidData(&graphql.Response{Data: json.RawMessage(`{}`)}))
	require.False(t, s.ValidData(&graphql.Response{Data: json.RawMessage(`{`)}))
	require.False(t, streamside.EndsReported(context.Background()))
	require.True(t, streamside.EndsReported(streamside.ReportEnds(context.Background())))
}

// A Stream takes one readiness, keeps the errors that ended it, and knows the shared response
// its last pull returned from any other with the same data.
func TestStreamCarriesReadinessEndAndSharedResult(t *testing.T) {
	ctx, s := streamside.With(context.Background())
	require.Same(t, s, streamside.Of(ctx))
	calls := 0
	require.True(t, s.SetReady(func(func()) bool { calls++; return true }))
	require.False(t, s.SetReady(func(func()) bool { return false }), "the first readiness stays")
	require.True(t, s.Ready()(nil))
	require.Equal(t, 1, calls)

	end := &gqlerror.Error{Message: "the event stream fell behind", Extensions: map[string]any{"code": "RESUME_REQUIRED"}}
	s.End(end)
	require.Equal(t, gqlerror.List{end}, s.Err())

	broken := streamside.NewShared(&graphql.Response{Data: json.RawMessage(`{"a":`)})
	s.Responded(broken)
	require.False(t, s.ValidData(broken.Response()))
	require.False(t, s.ValidData(broken.Response()), "invalid data is refused every time")
	good := streamside.NewShared(&graphql.Response{Data: json.RawMessage(`{"a":1}`)})
	s.Responded(good)
	require.True(t, s.ValidData(good.Response()))
	require.False(t, s.ValidData(&graphql.Response{Data: json.RawMessage(`{"a":`)}), "another response is checked itself")
}
