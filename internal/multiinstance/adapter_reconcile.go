package multiinstance

import (
	"net/http"
	"time"
)

// reconcileState is what the adapter needs to answer /reconcile truthfully (docs/providers.md):
// the children its /fork made, the tombstones of requests it answered absent, and how each
// session's calls are answered. Guarded by Adapter.mu.
type reconcileState struct {
	enabled bool
	made    map[string]bool          // operation id → its /fork made a child
	absent  map[string]bool          // operation id → answered absent: a later /fork is refused
	unknown map[string]bool          // source session → /fork answers unknown once the child is made
	slow    map[string]time.Duration // source session → how long /reconcile takes to answer
	calls   []ReconcileCall
}

func newReconcileState() reconcileState {
	return reconcileState{made: map[string]bool{}, absent: map[string]bool{}, unknown: map[string]bool{},
		slow: map[string]time.Duration{}}
}

// ReconcileCall is one /reconcile request the adapter answered.
type ReconcileCall struct {
	Instance    string // the path prefix the call came in on
	OperationID string
	Attempt     int
	Answer      string        // found or absent
	At          time.Time     // when it arrived
	Took        time.Duration // how long the adapter took to answer (SlowReconcile)
}

// fork records a /fork of operationID from source: made says the child exists (false for a
// request behind a tombstone), answer is the disposition to give.
func (s *reconcileState) fork(operationID, source string) (made bool, answer string) {
	if s.absent[operationID] {
		return false, "rejected"
	}
	s.made[operationID] = true
	if s.unknown[source] {
		return true, "unknown"
	}
	return true, "accepted"
}

// EnableReconcile makes the adapter describe itself with reconcile: true and answer /reconcile:
// found, with the child its /fork made (before any answer, even a held one), or absent for a
// request it never received, behind a tombstone that makes a later /fork of it rejected.
func (a *Adapter) EnableReconcile() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reconcile.enabled = true
}

func (a *Adapter) reconciles() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reconcile.enabled
}

// AnswerUnknown makes every /fork of source answer disposition unknown once its child is made:
// the operation ends DELIVERY_UNKNOWN at once, for reconciliation to resolve.
func (a *Adapter) AnswerUnknown(source string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reconcile.unknown[source] = true
}

// SlowReconcile makes every /reconcile of source's operations take d before it answers: a
// provider whose lookup is slow.
func (a *Adapter) SlowReconcile(source string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reconcile.slow[source] = d
}

// ReconcileCalls returns every /reconcile call answered so far, in the order answered.
func (a *Adapter) ReconcileCalls() []ReconcileCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]ReconcileCall(nil), a.reconcile.calls...)
}

func (a *Adapter) answerReconcile(w http.ResponseWriter, r *http.Request, instance, operationID, source string, attempt int) {
	at := time.Now()
	a.mu.Lock()
	enabled, slow := a.reconcile.enabled, a.reconcile.slow[source]
	a.mu.Unlock()
	if !enabled {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "this adapter does not reconcile"})
		return
	}
	if slow > 0 {
		select {
		case <-time.After(slow): // the provider's lookup takes this long
		case <-r.Context().Done():
			return
		}
	}
	a.mu.Lock()
	answer := "found"
	if !a.reconcile.made[operationID] {
		answer = "absent"
		a.reconcile.absent[operationID] = true
	}
	a.reconcile.calls = append(a.reconcile.calls, ReconcileCall{Instance: instance, OperationID: operationID,
		Attempt: attempt, Answer: answer, At: at, Took: time.Since(at)})
	a.mu.Unlock()
	if answer == "absent" {
		writeJSON(w, http.StatusOK, map[string]any{"answer": "absent", "error": "no fork was received for this request"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"answer": "found", "providerSessionId": "child-" + operationID,
		"stateBindingMode": "host_copy"})
}
