package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// forkgraphTimeout bounds one resume check against forkgraph.
const forkgraphTimeout = 10 * time.Second

// verifyQuery is forkgraph's resume check (docs/api.md, "Resume check").
const verifyQuery = `query($ws: ID!, $id: ID!) { verifyForkedSession(workspaceId: $ws, sessionId: $id) {
	status reason session { providerSessionId } forkOperation { localId } } }`

// forkgraphClient asks forkgraph whether a session's fork identity holds before it is resumed.
type forkgraphClient struct {
	url   string // the GraphQL endpoint, e.g. http://127.0.0.1:8080/graphql
	token string // a bearer token with the read scope; empty in forkgraph's open mode
	http  *http.Client
}

// verification is what the resume needs of forkgraph's answer.
type verification struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Session struct {
		ProviderSessionID string `json:"providerSessionId"`
	} `json:"session"`
}

func (c *forkgraphClient) verify(ctx context.Context, workspaceID, sessionID string) (verification, error) {
	payload, err := json.Marshal(map[string]any{"query": verifyQuery, "variables": map[string]string{"ws": workspaceID, "id": sessionID}})
	if err != nil {
		return verification{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, forkgraphTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return verification{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return verification{}, fmt.Errorf("forkgraph: %w", err)
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			VerifyForkedSession *verification `json:"verifyForkedSession"`
		} `json:"data"`
		Errors []struct {
			Message    string `json:"message"`
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxReadRequestBytes)).Decode(&body); err != nil {
		return verification{}, fmt.Errorf("forkgraph answered HTTP %d without a GraphQL response: %w", resp.StatusCode, err)
	}
	if len(body.Errors) > 0 {
		return verification{}, fmt.Errorf("forkgraph: %s (%s)", body.Errors[0].Message, body.Errors[0].Extensions.Code)
	}
	if body.Data.VerifyForkedSession == nil {
		return verification{}, fmt.Errorf("forkgraph answered HTTP %d without a verification", resp.StatusCode)
	}
	return *body.Data.VerifyForkedSession, nil
}

// resume is the runtime side of resuming a session in this provider, with the check forkgraph's
// reference makes first (§5.4): a session that forkgraph says is a fork must verify, and the
// provider session being resumed must be the session's own. Anything else fails closed, also a
// forkgraph that cannot be asked: a resume of a fork whose identity does not hold would continue
// another conversation's state. A resume that passes is recorded (Resumes in the state file).
func (a *adapter) resume(w http.ResponseWriter, r *http.Request) {
	var req resumeRequest
	if err := decode(w, r, &req, maxReadRequestBytes); err != nil {
		writeJSON(w, decodeStatus(err), resumeResponse{Error: err.Error()})
		return
	}
	if req.WorkspaceID == "" || req.SessionID == "" || req.ProviderSessionID == "" {
		writeJSON(w, http.StatusBadRequest, resumeResponse{Error: "workspaceId, sessionId and providerSessionId are required"})
		return
	}
	if a.forkgraph == nil {
		writeJSON(w, http.StatusServiceUnavailable, resumeResponse{Error: "no forkgraph to verify the session with (-forkgraph-url)"})
		return
	}
	v, err := a.forkgraph.verify(r.Context(), req.WorkspaceID, req.SessionID)
	switch {
	case err != nil:
		a.log.Printf("resume %s/%s: %v", req.WorkspaceID, req.SessionID, err)
		writeJSON(w, http.StatusServiceUnavailable, resumeResponse{Error: "the resume check failed: " + err.Error()})
		return
	case v.Status != "VERIFIED" && v.Status != "NOT_A_FORK":
		writeJSON(w, http.StatusConflict, resumeResponse{Status: v.Status, Reason: v.Reason,
			Error: "forkgraph cannot verify this fork's identity; it is not resumed"})
		return
	case v.Session.ProviderSessionID != req.ProviderSessionID:
		writeJSON(w, http.StatusConflict, resumeResponse{Status: v.Status, Reason: "provider_session_mismatch",
			Error: fmt.Sprintf("session %s is provider session %q, not %q", req.SessionID, v.Session.ProviderSessionID, req.ProviderSessionID)})
		return
	}
	err = a.state.update(func(s *state) error {
		s.Resumes[req.ProviderSessionID]++
		return nil
	})
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, resumeResponse{Error: err.Error()})
		return
	}
	a.log.Printf("resume %s/%s (%s): %s", req.WorkspaceID, req.SessionID, req.ProviderSessionID, v.Status)
	writeJSON(w, http.StatusOK, resumeResponse{Resumed: true, Status: v.Status})
}
