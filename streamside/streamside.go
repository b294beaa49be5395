// Package streamside carries what a transport must know about a streaming operation, from the
// layer that resolves its stream (resolvers) to the layer that delivers it (transports):
// whether its next response is ready without waiting, the error that ended it, and whether a
// response is the one every subscriber of an event shares. It imports the standard library and
// gqlgen only, and neither resolvers nor transports, so neither imports the other.
//
// Each context value here is written only by the layer that made it. The resolving layer makes
// one Stream per operation (With, in an operation middleware) and fills it in; the transport
// reads it from the context gqlgen's DispatchOperation returns. A transport that reports a
// stream's final error itself (graphql-transport-ws's `error` message, SSE's last `next`) says
// so with ReportEnds on the context it dispatches with, which the resolving layer only reads.
// The walk from a subscribe message to a delivered event thus goes one way: transport, executor,
// resolver, engine, and results back.
package streamside

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Stream is one operation's side channel. Its zero value is ready to use; a nil *Stream (no
// resolving layer made one) knows nothing: not ready-aware, no error, nothing shared.
type Stream struct {
	ready atomic.Pointer[func(wake func()) bool]

	mu  sync.Mutex
	err gqlerror.List

	// shared is the shared result the operation's last response came from (nil: its own). The
	// goroutine that pulls a response sets it, and the transport reads it on that same
	// goroutine right after the pull, before it pulls the next.
	shared atomic.Pointer[Shared]
}

type streamKey struct{}

// With returns ctx carrying a new Stream for the operation ctx starts, and that Stream.
func With(ctx context.Context) (context.Context, *Stream) {
	s := &Stream{}
	return context.WithValue(ctx, streamKey{}, s), s
}

// Of returns the Stream of the operation ctx belongs to, or nil when none was made.
func Of(ctx context.Context) *Stream {
	s, _ := ctx.Value(streamKey{}).(*Stream)
	return s
}

// SetReady tells the transport how to learn, without waiting, that the stream's next response
// is ready: ready reports true when pulling it would not wait, and otherwise arranges for wake
// to be called (once; it must not block) as soon as that changes. A transport that parks
// between events then holds no goroutine for the operation. It returns false, and does
// nothing, when s is nil or already has a readiness.
func (s *Stream) SetReady(ready func(wake func()) bool) bool {
	return s != nil && s.ready.CompareAndSwap(nil, &ready)
}

// Ready is the stream's readiness (SetReady); nil when it cannot tell, and a pull may wait.
func (s *Stream) Ready() func(wake func()) bool {
	if s == nil {
		return nil
	}
	if r := s.ready.Load(); r != nil {
		return *r
	}
	return nil
}

// End records the presented error that ended the stream; the transport that reports ends
// (ReportEnds) sends it after the last response instead of a plain completion.
func (s *Stream) End(err *gqlerror.Error) {
	if s == nil || err == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = append(s.err, err)
}

// Err is the errors End recorded (none: the stream completed, or is still going on).
func (s *Stream) Err() gqlerror.List {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Responded records the shared result the response just pulled is (nil: a response of the
// operation's own).
func (s *Stream) Responded(r *Shared) {
	if s != nil {
		s.shared.Store(r)
	}
}

// ValidData reports whether resp.Data is valid JSON: for the response every subscriber of an
// event shares (Responded), checked once for all of them, else checked now.
func (s *Stream) ValidData(resp *graphql.Response) bool {
	if s != nil {
		if r := s.shared.Load(); r != nil && r.resp == resp {
			return r.validData()
		}
	}
	return json.Valid(resp.Data)
}

// Shared is one event's response shared by the subscribers of a subscription that gives them
// all the same answer; what a transport learns about it (its data is valid JSON) is learnt once.
type Shared struct {
	resp  *graphql.Response
	once  sync.Once
	valid bool
}

// NewShared wraps the response the subscribers of an event share; it must not change after.
func NewShared(resp *graphql.Response) *Shared { return &Shared{resp: resp} }

// Response is the shared response.
func (r *Shared) Response() *graphql.Response { return r.resp }

func (r *Shared) validData() bool {
	r.once.Do(func() { r.valid = json.Valid(r.resp.Data) })
	return r.valid
}

type reportsEndsKey struct{}

// ReportEnds returns ctx saying that the transport dispatching it reports a stream's final
// error itself (Stream.Err, read once the stream has ended), so the resolving layer records
// it there instead of sending it as one last response.
func ReportEnds(ctx context.Context) context.Context {
	return context.WithValue(ctx, reportsEndsKey{}, true)
}

// EndsReported reports whether the transport of ctx's operation reports stream ends (ReportEnds).
func EndsReported(ctx context.Context) bool {
	reported, _ := ctx.Value(reportsEndsKey{}).(bool)
	return reported
}
