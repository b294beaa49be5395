package main

import (
	"errors"
	"fmt"
	"net/http"
)

// reconcile answers "what became of the fork with this request id?" without ever forking. found:
// the child recorded by /fork. absent: no child exists, and, so that this stays true, a request id
// never seen before gets a durable tombstone first, which makes a /fork arriving later (a slow or
// resent delivery) refuse it. A failure to write the tombstone answers unknown, never absent.
func (a *adapter) reconcile(w http.ResponseWriter, r *http.Request) {
	var req forkRequest
	if err := decode(w, r, &req, a.forkLimit()); err != nil {
		writeJSON(w, decodeStatus(err), errorResponse{Error: err.Error()})
		return
	}
	if req.WorkspaceID == "" || req.RequestID == "" || req.OperationID == "" {
		writeJSON(w, http.StatusBadRequest, errorResponse{Error: "workspaceId, requestId and operationId are required"})
		return
	}
	var out reconcileResponse
	err := a.state.update(func(s *state) error {
		if owner := s.owner(req.Source.ProviderSessionID); owner != "" && owner != req.WorkspaceID {
			return notYours(req.Source.ProviderSessionID, req.WorkspaceID)
		}
		rec, seen := s.request(req.WorkspaceID, req.RequestID)
		switch {
		case !seen:
			rec = requestRecord{OperationID: req.OperationID, Outcome: outcomeAbsent}
			out = reconcileResponse{Answer: answerAbsent, Error: "no fork was received for this request; it never will be"}
		case rec.Outcome == outcomeForked && rec.OperationID == req.OperationID:
			out = reconcileResponse{Answer: answerFound, ProviderSessionID: rec.ChildID, StateBindingMode: hostCopy}
		case rec.Outcome == outcomeForked:
			// The id is taken by another operation, so a /fork of this one would be refused.
			out = reconcileResponse{Answer: answerAbsent, Error: fmt.Sprintf("request %q belongs to operation %q", req.RequestID, rec.OperationID)}
		default:
			out = reconcileResponse{Answer: answerAbsent, Error: "already reconciled as absent"}
		}
		rec.Reconciles++
		rec.UpdatedAt = a.now()
		s.setRequest(req.WorkspaceID, req.RequestID, rec)
		return nil
	})
	var notOwned forbidden
	switch {
	case errors.As(err, &notOwned):
		// Nothing is told of the other workspace's session, and nothing is written for it: not even
		// a tombstone, which would be a fact about that session.
		a.log.Printf("reconcile %s/%s (%s): forbidden: %s", req.WorkspaceID, req.RequestID, req.OperationID, notOwned)
		writeJSON(w, http.StatusForbidden, reconcileResponse{Answer: "unknown", Error: string(notOwned)})
		return
	case err != nil:
		a.log.Printf("reconcile %s/%s (%s): %v", req.WorkspaceID, req.RequestID, req.OperationID, err)
		writeJSON(w, http.StatusServiceUnavailable, reconcileResponse{Answer: "unknown", Error: err.Error()})
		return
	}
	a.log.Printf("reconcile %s/%s (%s) attempt %d: %s %s", req.WorkspaceID, req.RequestID, req.OperationID,
		req.Attempt, out.Answer, out.ProviderSessionID)
	writeJSON(w, http.StatusOK, out)
}

// invalidFork says what is wrong with a fork request, or "" when it can be forked: this provider
// needs the request's identity, the source's provider session and a bound boundary turn that ends
// the prefix, and only does host_copy.
func invalidFork(req forkRequest, header string) string {
	switch {
	case req.WorkspaceID == "" || req.RequestID == "" || req.OperationID == "":
		return "workspaceId, requestId and operationId are required"
	case header != "" && header != req.OperationID:
		return fmt.Sprintf("%s %q does not match operationId %q", operationHeader, header, req.OperationID)
	case req.Source.WorkspaceID != "" && req.Source.WorkspaceID != req.WorkspaceID:
		return fmt.Sprintf("the source is a session of workspace %q, not of %q", req.Source.WorkspaceID, req.WorkspaceID)
	case req.Source.ProviderSessionID == "":
		return "the source has no provider session"
	case req.ThroughTurn.ProviderTurnID == "" || !isObject(req.ThroughTurn.ProviderTurnBinding):
		return "the boundary turn has no provider binding"
	case req.PrefixTurns < 1 || req.BoundTurns < 0 || req.BoundTurns > req.PrefixTurns:
		return "prefixTurns must count the frozen prefix (at least throughTurn) and boundTurns at most as many"
	case req.Descriptor.StateBindingMode != "" && req.Descriptor.StateBindingMode != hostCopy:
		return fmt.Sprintf("this provider only forks host_copy, not %q", req.Descriptor.StateBindingMode)
	}
	return ""
}
