package multiinstance

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Adapter is a webhook provider adapter (docs/providers.md) served by the test process. Each
// instance is given its own base URL (URL(name)), so the adapter knows which instance made each
// call. It counts every /fork call by operation id the moment it arrives, before it answers or
// holds, and it can hold a session's /describe or /fork calls from one instance until released.
// Because the test process is never killed, its counts are the provider's truth. With
// EnableReconcile it also answers /reconcile truthfully (reconcile.go).
type Adapter struct {
	server *httptest.Server

	mu        sync.Mutex
	forks     []ForkCall
	describes map[[2]string]int // (instance, session) → describe calls so far
	holds     []*Hold
	reconcile reconcileState
}

// ForkCall is one /fork request the adapter received.
type ForkCall struct {
	Instance      string // the path prefix the call came in on
	OperationID   string
	HeaderID      string // the Forkgraph-Operation-Id header
	SourceSession string
	ThroughTurn   string
}

// Hold parks matching calls until Release.
type Hold struct {
	instance, session, path string
	after                   int // describe only: the first `after` calls pass

	reachOnce sync.Once
	reached   chan struct{}
	release   chan struct{}
	relOnce   sync.Once
}

// Reached is closed once a call has been held.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Release lets every held call, and every later matching one, go on.
func (h *Hold) Release() { h.relOnce.Do(func() { close(h.release) }) }

// NewAdapter starts an adapter on a loopback port.
func NewAdapter() *Adapter {
	a := &Adapter{describes: map[[2]string]int{}, reconcile: newReconcileState()}
	a.server = httptest.NewServer(http.HandlerFunc(a.serve))
	return a
}

// URL is the base URL to give instance name as -webhook-url.
func (a *Adapter) URL(name string) string { return a.server.URL + "/" + name }

// Close releases every hold and stops the adapter.
func (a *Adapter) Close() {
	a.mu.Lock()
	for _, h := range a.holds {
		h.Release()
	}
	a.mu.Unlock()
	a.server.Close()
}

// HoldDescribe holds the /describe calls of session from instance after the first after of them.
// The engine describes a session once when a fork is requested and again just before it moves the
// operation to dispatching, so after=1 parks a new fork in prepared (FROZEN).
func (a *Adapter) HoldDescribe(instance, session string, after int) *Hold {
	return a.addHold(&Hold{instance: instance, session: session, path: "describe", after: after})
}

// HoldFork holds the /fork calls of session from instance (counted first), which parks their
// operations in dispatching.
func (a *Adapter) HoldFork(instance, session string) *Hold {
	return a.addHold(&Hold{instance: instance, session: session, path: "fork"})
}

func (a *Adapter) addHold(h *Hold) *Hold {
	h.reached, h.release = make(chan struct{}), make(chan struct{})
	a.mu.Lock()
	a.holds = append(a.holds, h)
	a.mu.Unlock()
	return h
}

// ForkCalls returns every /fork call received so far, in arrival order.
func (a *Adapter) ForkCalls() []ForkCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ForkCall(nil), a.forks...)
}

// ForkCallsOf returns the /fork calls of one operation.
func (a *Adapter) ForkCallsOf(operationID string) []ForkCall {
	var out []ForkCall
	for _, c := range a.ForkCalls() {
		if c.OperationID == operationID {
			out = append(out, c)
		}
	}
	return out
}

type adapterSession struct {
	ID string `json:"id"`
}

type adapterTurn struct {
	ID string `json:"id"`
}

func (a *Adapter) serve(w http.ResponseWriter, r *http.Request) {
	instance, path, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	var body struct {
		Session     adapterSession   `json:"session"`
		Probes      []map[string]any `json:"probes"`
		OperationID string           `json:"operationId"`
		Source      adapterSession   `json:"source"`
		ThroughTurn adapterTurn      `json:"throughTurn"`
		Attempt     int              `json:"attempt"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "undecodable request: " + err.Error()})
		return
	}
	switch path {
	case "describe":
		if !a.pass(r, a.describeHold(instance, body.Session.ID)) {
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"kind": "multiinstance-adapter", "version": "1",
			"stateBindingMode": "host_copy", "throughTurn": true, "fullSession": false, "reconcile": a.reconciles()})
	case "probe":
		forkable := make([]bool, len(body.Probes))
		for i := range forkable {
			forkable[i] = true
		}
		writeJSON(w, http.StatusOK, map[string]any{"forkable": forkable})
	case "fork":
		a.mu.Lock()
		a.forks = append(a.forks, ForkCall{Instance: instance, OperationID: body.OperationID,
			HeaderID: r.Header.Get("Forkgraph-Operation-Id"), SourceSession: body.Source.ID, ThroughTurn: body.ThroughTurn.ID})
		hold := a.findHold(instance, body.Source.ID, "fork")
		made, answer := a.reconcile.fork(body.OperationID, body.Source.ID) // the child exists before any answer
		a.mu.Unlock()
		if !made {
			writeJSON(w, http.StatusOK, map[string]any{"disposition": "rejected", "error": "this request was reconciled absent"})
			return
		}
		if !a.pass(r, hold) {
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"disposition": answer,
			"providerSessionId": "child-" + body.OperationID, "stateBindingMode": "host_copy"})
	case "reconcile":
		a.answerReconcile(w, r, instance, body.OperationID, body.Source.ID, body.Attempt)
	default:
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "unknown path " + r.URL.Path})
	}
}

func (a *Adapter) describeHold(instance, session string) *Hold {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := [2]string{instance, session}
	a.describes[key]++
	h := a.findHold(instance, session, "describe")
	if h != nil && a.describes[key] <= h.after {
		return nil
	}
	return h
}

// findHold returns the hold matching a call; a.mu must be held.
func (a *Adapter) findHold(instance, session, path string) *Hold {
	for _, h := range a.holds {
		if h.instance == instance && h.session == session && h.path == path {
			return h
		}
	}
	return nil
}

// pass waits while h holds the call; false means the caller went away (its instance was killed)
// and nothing should be written.
func (a *Adapter) pass(r *http.Request, h *Hold) bool {
	if h == nil {
		return true
	}
	h.reachOnce.Do(func() { close(h.reached) })
	select {
	case <-h.release:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
