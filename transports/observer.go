package transports

import (
	"net/http"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// ProtocolSSE names server-sent event streams to an Observer, beside the websocket
// subprotocols SubprotocolTransportWS and SubprotocolLegacyWS.
const ProtocolSSE = "sse"

// Observer is told what the streaming transports do, for metrics and logs; the transports import
// no metrics library. Every field is optional. The funcs run on the connection's own goroutines,
// some with its lock held, so they must be quick and must not call back into the transport.
type Observer struct {
	// Opened is called when a websocket is upgraded (protocol is its subprotocol) or an SSE
	// stream starts (ProtocolSSE). r is the request that opened it.
	Opened func(r *http.Request, protocol string)
	// Closed is called once when that connection or stream has ended, with how long it lived
	// and, for a websocket, the close code the server sent or else the one the client sent (0
	// when there was none: the network failed). SSE streams report 0.
	Closed func(r *http.Request, protocol string, code int, lifetime time.Duration)
	// QueueBytes is called with the change in the bytes waiting in websocket send queues:
	// positive when a message is queued, negative when the writer takes it or it is dropped.
	QueueBytes func(delta int)
	// Dropped is called for each operation result that was not queued because its connection
	// was already closing (the client left, was too slow, or the server is shutting down).
	Dropped func(protocol string)
	// Refused is called with the extensions.code of each error a websocket sends that no GraphQL
	// execution produced (an operation over the connection's bound or refused by the
	// OperationLimiter, @defer in a subscription, a malformed message, an InitFunc's refusal), so
	// they are counted with the errors of GraphQL responses.
	Refused func(protocol, code string)
}

func (o *Observer) opened(r *http.Request, protocol string) {
	if o != nil && o.Opened != nil {
		o.Opened(r, protocol)
	}
}

func (o *Observer) closed(r *http.Request, protocol string, code int, since time.Time) {
	if o != nil && o.Closed != nil {
		o.Closed(r, protocol, code, time.Since(since))
	}
}

func (o *Observer) queueBytes(delta int) {
	if o != nil && o.QueueBytes != nil && delta != 0 {
		o.QueueBytes(delta)
	}
}

func (o *Observer) dropped(protocol string) {
	if o != nil && o.Dropped != nil {
		o.Dropped(protocol)
	}
}

func (o *Observer) refused(protocol string, errs ...*gqlerror.Error) {
	if o == nil || o.Refused == nil {
		return
	}
	for _, err := range errs {
		code, _ := err.Extensions["code"].(string)
		o.Refused(protocol, code)
	}
}
