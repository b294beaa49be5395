package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"
)

// Submission contents, as forkgraph's reportTurn names them.
const (
	contentPlainText  = "plain_text"
	contentMultimodal = "multimodal"

	answerAmbiguous = "ambiguous"
)

// maxHistoryDepth bounds the walk from a forked provider session up through its parents.
const maxHistoryDepth = 64

// submit is the provider's own API, the one an agent runtime sends its prompts to (not part of
// forkgraph's webhook protocol): it records the turn in the provider session's history and answers
// with the provider turn id and binding the runtime then reports to forkgraph. A runtime that
// crashes between the two leaves a turn forkgraph knows without its binding; /recover-binding
// finds it again.
func (a *adapter) submit(w http.ResponseWriter, r *http.Request) {
	var req submitRequest
	if err := decode(w, r, &req, maxReadRequestBytes); err != nil {
		writeJSON(w, decodeStatus(err), errorResponse{Error: err.Error()})
		return
	}
	if msg := invalidSubmit(req); msg != "" {
		writeJSON(w, http.StatusBadRequest, errorResponse{Error: msg})
		return
	}
	var turn providerTurn
	err := a.state.update(func(s *state) error {
		switch owner := s.owner(req.ProviderSessionID); owner {
		case req.WorkspaceID:
		case "":
			s.Roots[req.ProviderSessionID] = req.WorkspaceID // a conversation starts with its first prompt
		default:
			return notYours(req.ProviderSessionID, req.WorkspaceID)
		}
		id, err := a.newID()
		if err != nil {
			return fmt.Errorf("new provider turn id: %w", err)
		}
		turn = providerTurn{ID: "turn-" + id, WorkspaceID: req.WorkspaceID, ClientSubmitID: req.ClientSubmitID,
			Content: req.Content, Text: req.Text, SubmittedAt: a.now()}
		s.Turns[req.ProviderSessionID] = append(s.Turns[req.ProviderSessionID], turn)
		return nil
	})
	var notOwned forbidden
	switch {
	case errors.As(err, &notOwned):
		writeJSON(w, http.StatusForbidden, errorResponse{Error: string(notOwned)})
		return
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, errorResponse{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, submitResponse{ProviderTurnID: turn.ID, ProviderTurnBinding: turnBinding(req.ProviderSessionID, turn)})
}

func invalidSubmit(req submitRequest) string {
	switch {
	case req.WorkspaceID == "" || req.ProviderSessionID == "":
		return "workspaceId and providerSessionId are required"
	case req.Content != contentPlainText && req.Content != contentMultimodal:
		return fmt.Sprintf("content must be %s or %s", contentPlainText, contentMultimodal)
	case req.Content == contentPlainText && (req.Text == "" || !utf8.ValidString(req.Text)):
		return "a plain_text prompt needs its text"
	case req.Content != contentPlainText && req.Text != "":
		return "only a plain_text prompt has a text"
	}
	return ""
}

// turnBinding is the opaque object this provider gives a turn: enough to find it again.
func turnBinding(providerSessionID string, t providerTurn) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"providerSessionId": providerSessionID, "turn": t.ID}) // strings always marshal
	return b
}

// recoverBinding answers /recover-binding: it looks the turn up in the history of the session's
// provider session by the proof, and only reads. The client submit id is the first choice; the
// text digest (HMAC-SHA256 under the key forkgraph sends, compared with every plain-text prompt
// of the history) the fallback. Exactly one match is found; two or more are ambiguous; none is
// absent. It never picks a turn by its place in the history.
func (a *adapter) recoverBinding(w http.ResponseWriter, r *http.Request) {
	var req recoverBindingRequest
	if err := decode(w, r, &req, maxReadRequestBytes); err != nil {
		writeJSON(w, decodeStatus(err), errorResponse{Error: err.Error()})
		return
	}
	psid := req.Session.ProviderSessionID
	if req.WorkspaceID == "" || psid == "" {
		writeJSON(w, http.StatusBadRequest, errorResponse{Error: "workspaceId and session.providerSessionId are required"})
		return
	}
	key, digest, err := req.Proof.textProof()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
		return
	}
	var history []providerTurn
	a.state.read(func(s *state) {
		if owner := s.owner(psid); owner == "" || owner == req.WorkspaceID { // another's session holds nothing for it
			history = s.history(psid, req.WorkspaceID)
		}
	})
	var matches []providerTurn
	if id := req.Proof.ClientSubmitID; id != "" {
		matches = matching(history, func(t providerTurn) bool { return t.ClientSubmitID == id })
	}
	if len(matches) == 0 && key != nil {
		matches = matching(history, func(t providerTurn) bool {
			mac := hmac.New(sha256.New, key)
			mac.Write([]byte(t.Text))
			return t.Content == contentPlainText && hmac.Equal(mac.Sum(nil), digest)
		})
	}
	out := recoverBindingResponse{Answer: answerAbsent, Error: "no turn of this provider session matches the proof"}
	switch {
	case len(matches) == 1:
		out = recoverBindingResponse{Answer: answerFound, ProviderSessionID: psid, ProviderTurnID: matches[0].ID,
			ProviderTurnBinding: turnBinding(psid, matches[0])}
	case len(matches) > 1:
		out = recoverBindingResponse{Answer: answerAmbiguous, Error: fmt.Sprintf("%d turns match the proof", len(matches))}
	}
	a.log.Printf("recover-binding %s/%s turn %s: %s %s", req.WorkspaceID, psid, req.Turn.ID, out.Answer, out.ProviderTurnID)
	writeJSON(w, http.StatusOK, out)
}

func matching(history []providerTurn, keep func(providerTurn) bool) []providerTurn {
	var out []providerTurn
	for _, t := range history {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// textProof decodes the text digest of a proof (nil without one).
func (p wireProof) textProof() (key, digest []byte, err error) {
	if p.TextDigest == nil {
		return nil, nil, nil
	}
	if p.TextDigest.Algorithm != "hmac-sha256" {
		return nil, nil, fmt.Errorf("text digest algorithm %q is not hmac-sha256", p.TextDigest.Algorithm)
	}
	if key, err = hex.DecodeString(p.TextDigest.Key); err != nil || len(key) == 0 {
		return nil, nil, fmt.Errorf("text digest key is not hex")
	}
	if digest, err = hex.DecodeString(p.TextDigest.Digest); err != nil || len(digest) != sha256.Size {
		return nil, nil, fmt.Errorf("text digest is not a hex SHA-256 HMAC")
	}
	return key, digest, nil
}

// history is what a provider session holds of the workspace's turns: its own, and for a session
// this adapter made by forking, its parent's up to and including the turn it was forked through
// (host_copy: the child holds a copy of the parent's history there).
func (s *state) history(providerSessionID, workspaceID string) []providerTurn {
	var chain []string // the session, its parent, ..., the root
	for id, depth := providerSessionID, 0; id != "" && depth < maxHistoryDepth; depth++ {
		chain = append(chain, id)
		id = s.Sessions[id].ParentID
	}
	var out []providerTurn
	for i := len(chain) - 1; i >= 0; i-- {
		turns := s.Turns[chain[i]]
		if i > 0 { // an ancestor: only up to the turn its child was forked through
			turns = through(turns, s.Sessions[chain[i-1]].ThroughProviderTurnID)
		}
		for _, t := range turns {
			if t.WorkspaceID == workspaceID {
				out = append(out, t)
			}
		}
	}
	return out
}

// through is turns up to and including the one with id (all of them when none has it).
func through(turns []providerTurn, id string) []providerTurn {
	for i, t := range turns {
		if t.ID == id {
			return turns[:i+1]
		}
	}
	return turns
}
