package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"
)

// Request body limits, derived from what forkgraph can send. forkgraph bounds one session and one
// turn (texts 4,096 bytes, JSON objects 64 KiB: under 1 MiB each even with every character
// JSON-escaped), and its webhook driver splits a /probe batch into bodies of at most 4 MiB
// (webhook.DefaultMaxProbeRequestBytes), so /describe and /probe fit in maxReadRequestBytes with
// room to spare. A /fork (and its /reconcile) carries the source session and the boundary turn
// and only counts the rest of the prefix (forkgraph shares the history instead of sending it),
// so it fits the same limit for any transcript. A larger body is refused with 413 and "rejected":
// the fork fails with that explanation and nothing is made.
const (
	maxReadRequestBytes = 8 << 20
	maxForkRequestBytes = maxReadRequestBytes
)

// adapter serves the webhook protocol for a provider whose sessions live in its state file.
type adapter struct {
	state     *stateFile
	forkDelay time.Duration // after a child is durably recorded, before /fork answers
	now       func() time.Time
	newID     func() (string, error)
	log       *log.Logger
	// maxForkBytes bounds a /fork or /reconcile body; 0 means maxForkRequestBytes.
	maxForkBytes int64
	// forkgraph is asked before a resume (/resume); nil: resumes are refused.
	forkgraph *forkgraphClient
}

// refusal is a change that was not made, with the reason to send back; the state is not written.
type refusal string

func (r refusal) Error() string { return string(r) }

// forbidden is a refusal because the provider session belongs to another workspace: answered 403,
// naming neither that workspace nor anything of it.
type forbidden string

func (f forbidden) Error() string { return string(f) }

// notYours is the forbidden of a provider session another workspace owns.
func notYours(providerSessionID, workspaceID string) forbidden {
	return forbidden(fmt.Sprintf("provider session %q does not belong to workspace %q", providerSessionID, workspaceID))
}

func (a *adapter) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /describe", a.describe)
	mux.HandleFunc("POST /probe", a.probe)
	mux.HandleFunc("POST /fork", a.fork)
	mux.HandleFunc("POST /reconcile", a.reconcile)
	mux.HandleFunc("POST /recover-binding", a.recoverBinding)
	mux.HandleFunc("POST /submit", a.submit)
	mux.HandleFunc("POST /resume", a.resume)
	return mux
}

// descriptor is the same for every session. host_copy: forkgraph copies the transcript from its
// frozen snapshot and the child keeps the source's turn bindings, so the only thing this provider
// has to make, remember and report again on /reconcile is the child's provider session id.
func (a *adapter) descriptor() descriptor {
	return descriptor{Kind: "reference-adapter", Version: "1", StateBindingMode: hostCopy,
		ThroughTurn: true, Reconcile: true, RecoverBinding: true}
}

// describe answers /describe. It reads nothing and changes nothing: forkgraph calls it on reads.
func (a *adapter) describe(w http.ResponseWriter, r *http.Request) {
	var req describeRequest
	if err := decode(w, r, &req, maxReadRequestBytes); err != nil {
		writeJSON(w, decodeStatus(err), errorResponse{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, a.descriptor())
}

// probe answers a whole batch in order: a turn can be forked when it is settled and bound to a
// provider turn of a provider session that no other workspace than the request's owns (it is
// false for one that another does, so a workspace learns nothing of another's sessions).
func (a *adapter) probe(w http.ResponseWriter, r *http.Request) {
	var req probeRequest
	if err := decode(w, r, &req, maxReadRequestBytes); err != nil {
		writeJSON(w, decodeStatus(err), errorResponse{Error: err.Error()})
		return
	}
	out := probeResponse{Forkable: make([]bool, len(req.Probes))}
	a.state.read(func(s *state) {
		for i, p := range req.Probes {
			ws := req.WorkspaceID
			if ws == "" {
				ws = p.Session.WorkspaceID
			}
			owner := s.owner(p.Session.ProviderSessionID)
			out.Forkable[i] = p.Session.ProviderSessionID != "" && (owner == "" || owner == ws) &&
				p.Session.WorkspaceID == ws && p.Turn.Phase == "settled" && p.Turn.ProviderTurnID != "" &&
				isObject(p.Turn.ProviderTurnBinding)
		}
	})
	writeJSON(w, http.StatusOK, out)
}

// fork makes the child, or returns the one it made before for this request id. The child is
// durably recorded before the answer, so a crash after this point leaves a child /reconcile finds.
// A request id /reconcile already called absent is refused for good.
func (a *adapter) fork(w http.ResponseWriter, r *http.Request) {
	var req forkRequest
	if err := decode(w, r, &req, a.forkLimit()); err != nil {
		// Nothing was made: the request was not even read. Rejected, so the fork fails cleanly.
		writeJSON(w, decodeStatus(err), forkResponse{Disposition: dispositionRejected, Error: err.Error()})
		return
	}
	if msg := invalidFork(req, r.Header.Get(operationHeader)); msg != "" {
		writeJSON(w, http.StatusBadRequest, forkResponse{Disposition: dispositionRejected, Error: msg})
		return
	}
	child, deliveries, err := a.recordFork(req)
	var refused refusal
	var notOwned forbidden
	switch {
	case errors.As(err, &notOwned):
		a.log.Printf("fork %s/%s (%s): forbidden: %s", req.WorkspaceID, req.RequestID, req.OperationID, notOwned)
		writeJSON(w, http.StatusForbidden, forkResponse{Disposition: dispositionRejected, Error: string(notOwned)})
		return
	case errors.As(err, &refused):
		a.log.Printf("fork %s/%s (%s): refused: %s", req.WorkspaceID, req.RequestID, req.OperationID, refused)
		writeJSON(w, http.StatusConflict, forkResponse{Disposition: dispositionRejected, Error: string(refused)})
		return
	case err != nil:
		// Nothing is known to be recorded, but unknown is the answer that can never be a lie.
		a.log.Printf("fork %s/%s (%s): %v", req.WorkspaceID, req.RequestID, req.OperationID, err)
		writeJSON(w, http.StatusServiceUnavailable, forkResponse{Disposition: "unknown", Error: err.Error()})
		return
	}
	a.log.Printf("fork %s/%s (%s): child %s (delivery %d)", req.WorkspaceID, req.RequestID, req.OperationID, child, deliveries)
	if !a.wait(r) {
		// The caller is gone or the adapter is stopping: close the connection without an answer
		// (returning would send an empty 200). The child is recorded; /reconcile will find it.
		panic(http.ErrAbortHandler)
	}
	writeJSON(w, http.StatusOK, forkResponse{Disposition: dispositionAccepted, ProviderSessionID: child,
		StateBindingMode: hostCopy})
}

// recordFork makes and records the child of req, or counts one more delivery of a known request.
// The source must be the workspace's: a child this adapter made for it, or a root that no other
// workspace forked first (which the workspace adopts, durably, before anything is made).
func (a *adapter) recordFork(req forkRequest) (child string, deliveries int, err error) {
	err = a.state.update(func(s *state) error {
		src := req.Source.ProviderSessionID
		switch owner := s.owner(src); owner {
		case req.WorkspaceID:
		case "":
			s.Roots[src] = req.WorkspaceID
		default:
			return notYours(src, req.WorkspaceID)
		}
		rec, seen := s.request(req.WorkspaceID, req.RequestID)
		switch {
		case seen && rec.Outcome == outcomeAbsent:
			return refusal(fmt.Sprintf("request %q was reconciled as absent; fork it with a new request id", req.RequestID))
		case seen && rec.OperationID != req.OperationID:
			return refusal(fmt.Sprintf("request %q belongs to operation %q", req.RequestID, rec.OperationID))
		case !seen:
			id, err := a.childID(s, req.Source.ProviderSessionID)
			if err != nil {
				return err
			}
			s.Sessions[id] = a.childSession(id, req)
			rec = requestRecord{OperationID: req.OperationID, Outcome: outcomeForked, ChildID: id}
		}
		rec.ForkDeliveries++
		rec.UpdatedAt = a.now()
		s.setRequest(req.WorkspaceID, req.RequestID, rec)
		child, deliveries = rec.ChildID, rec.ForkDeliveries
		return nil
	})
	return child, deliveries, err
}

func (a *adapter) childSession(id string, req forkRequest) providerSession {
	return providerSession{ID: id, ParentID: req.Source.ProviderSessionID,
		ThroughProviderTurnID: req.ThroughTurn.ProviderTurnID, PrefixTurns: req.PrefixTurns, Title: req.TargetTitle,
		WorkspaceID: req.WorkspaceID, RequestID: req.RequestID, OperationID: req.OperationID, CreatedAt: a.now(),
		Model: req.Target.Model, Cwd: req.Target.Cwd, Settings: req.Target.Settings, PreparedContext: req.Target.PreparedContext}
}

// childID draws a fresh provider session id, never the source's or one already taken.
func (a *adapter) childID(s *state, source string) (string, error) {
	for {
		id, err := a.newID()
		if err != nil {
			return "", fmt.Errorf("new provider session id: %w", err)
		}
		if _, taken := s.Sessions[id]; !taken && id != source {
			return id, nil
		}
	}
}

// wait holds the answer for forkDelay (the test knob that makes a fork in flight observable) and
// reports whether the caller is still there.
func (a *adapter) wait(r *http.Request) bool {
	if a.forkDelay <= 0 {
		return true
	}
	timer := time.NewTimer(a.forkDelay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// randomID is the default child id source.
func randomID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "ref-" + hex.EncodeToString(b), nil
}

func (a *adapter) forkLimit() int64 {
	if a.maxForkBytes > 0 {
		return a.maxForkBytes
	}
	return maxForkRequestBytes
}

// decode reads one JSON request body of at most limit bytes into v.
func decode(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fmt.Errorf("decode request: the body is larger than this adapter accepts (%d bytes): %w", limit, err)
		}
		return fmt.Errorf("decode request: %w", err)
	}
	return nil
}

// decodeStatus is the status of an answer to a request decode refused.
func decodeStatus(err error) int {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func isObject(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(raw, &obj) == nil && obj != nil
}
