package transports

import (
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// TokenHeader is the header graphql-sse's single-connection mode carries its reservation token
// in; the query parameter "token" is the alternative for clients that cannot set headers.
const TokenHeader = "X-GraphQL-Event-Stream-Token"

// Defaults of Reservations, used where a field is zero.
const (
	// DefaultReservationTTL is how long a reservation waits for its stream to open.
	DefaultReservationTTL = 15 * time.Second
	// DefaultMaxReservationsPerClient bounds the reservations one client holds at once.
	DefaultMaxReservationsPerClient = 16
	// DefaultMaxReservations bounds the reservations of the whole server.
	DefaultMaxReservations = 4096
	// DefaultMaxReservationOperations bounds the operations running on one stream.
	DefaultMaxReservationOperations = 100
)

// Reservations holds graphql-sse "single connection mode" reservations: a PUT reserves a
// stream and answers 201 with its token; a GET with the token opens that stream (once); a POST
// with the token starts an operation (202) whose events arrive on the stream with its
// operationId; a DELETE with the token and operationId stops one. A reservation lives in this
// process only, so behind a load balancer its requests need sticky routing.
//
// Every request of a reservation must present the Authorization header the PUT did: one with
// another (or none) finds no reservation (404), so a leaked token is useless without the API
// token it was made with. Operations run with the credentials of the POST that started them,
// so the workspace rules are those of every other transport.
//
// The zero value is ready to use; its fields must not change once requests are served.
type Reservations struct {
	// TTL is how long a reservation whose stream never opens is kept. Default 15s.
	TTL time.Duration
	// MaxPerClient bounds the reservations (open or not) of one client, as ClientKey names it.
	// Default 16.
	MaxPerClient int
	// MaxTotal bounds the reservations of the server. Default 4096.
	MaxTotal int
	// MaxOperations bounds the operations running on one reservation. Default 100.
	MaxOperations int
	// ClientKey names the client of a PUT, whose MaxPerClient bound it counts against. It must
	// name what a client cannot vary at will: an identity the edge has authenticated, else the
	// client's address; a raw Authorization header would give every made-up token a bound of its
	// own, and one client could take MaxTotal. Default: the peer address (r.RemoteAddr's host).
	// forkgraph passes access.TrustedProxies.ClientKey (the valid token, else the address).
	ClientKey func(r *http.Request) string

	mu        sync.Mutex
	byToken   map[string]*reservation
	perClient map[string]int
}

// Len reports how many reservations are held.
func (s *Reservations) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byToken)
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// streamToken is the reservation token r carries, "" when none.
func streamToken(r *http.Request) string {
	if token := r.Header.Get(TokenHeader); token != "" {
		return token
	}
	return r.URL.Query().Get("token")
}

// clientKey names whose bound a reservation counts against.
func (s *Reservations) clientKey(r *http.Request) string {
	if s.ClientKey != nil {
		return s.ClientKey(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return host
}

// reserve answers a PUT: 201 with the new token, or 429 over a bound.
func (s *Reservations) reserve(w http.ResponseWriter, r *http.Request) {
	res := &reservation{owner: s, token: rand.Text(), auth: r.Header.Get("Authorization"), client: s.clientKey(r),
		events: make(chan streamEvent), ops: map[string]*singleOp{}}
	s.mu.Lock()
	if s.byToken == nil {
		s.byToken, s.perClient = map[string]*reservation{}, map[string]int{}
	}
	switch {
	case len(s.byToken) >= orDefault(s.MaxTotal, DefaultMaxReservations):
		s.mu.Unlock()
		writeFailure(w, failRequest(http.StatusTooManyRequests, "the server holds as many stream reservations as it may; retry later"))
		return
	case s.perClient[res.client] >= orDefault(s.MaxPerClient, DefaultMaxReservationsPerClient):
		s.mu.Unlock()
		writeFailure(w, failRequest(http.StatusTooManyRequests, "this client holds as many stream reservations as it may; use or drop one"))
		return
	}
	s.byToken[res.token] = res
	s.perClient[res.client]++
	res.init(orDefault(s.TTL, DefaultReservationTTL))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, res.token)
}

// lookup finds the reservation of r's token, if r presents the same Authorization as its PUT.
func (s *Reservations) lookup(r *http.Request) *reservation {
	token := streamToken(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	res := s.byToken[token]
	if res == nil || res.auth != r.Header.Get("Authorization") {
		return nil
	}
	return res
}

func (s *Reservations) remove(res *reservation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byToken[res.token] != res {
		return
	}
	delete(s.byToken, res.token)
	if s.perClient[res.client]--; s.perClient[res.client] <= 0 {
		delete(s.perClient, res.client)
	}
}

func writeFailure(w http.ResponseWriter, f *requestFailure) {
	writeJSONErrors(w, "application/json; charset=utf-8", f.status, f.errs, f.header)
}

var errNoStream = failRequest(http.StatusNotFound, "stream not found: reserve one with PUT, and send its token with the Authorization it was reserved with")

// serveSingle answers the requests of single-connection mode; it reports false for a request of
// distinct-connections mode (a GET or POST without a token).
func (t SSE) serveSingle(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) bool {
	s := t.Single
	switch {
	case r.Method == http.MethodPut:
		s.reserve(w, r)
	case r.Method == http.MethodDelete:
		res := s.lookup(r)
		if res == nil {
			writeFailure(w, errNoStream)
			return true
		}
		id := r.URL.Query().Get("operationId")
		if id == "" {
			writeFailure(w, failRequest(http.StatusBadRequest, "operationId query parameter is missing"))
			return true
		}
		res.stop(id)
		w.WriteHeader(http.StatusOK)
	case streamToken(r) == "":
		return false
	case r.Method == http.MethodGet:
		res := s.lookup(r)
		if res == nil {
			writeFailure(w, errNoStream)
			return true
		}
		res.serveStream(w, r, t)
	default: // POST
		t.startSingle(w, r, exec)
	}
	return true
}
