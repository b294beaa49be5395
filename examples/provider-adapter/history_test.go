package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"testing"
)

func (ta *testAdapter) submit(t *testing.T, psid, submitID, content, text string) submitResponse {
	t.Helper()
	var out submitResponse
	req := submitRequest{WorkspaceID: "ws", ProviderSessionID: psid, ClientSubmitID: submitID, Content: content, Text: text}
	if status := ta.post(t, "/submit", req, &out); status != http.StatusOK || out.ProviderTurnID == "" {
		t.Fatalf("submit = %d %+v", status, out)
	}
	return out
}

func (ta *testAdapter) recover(t *testing.T, psid string, proof wireProof) (int, recoverBindingResponse) {
	t.Helper()
	var out recoverBindingResponse
	req := recoverBindingRequest{WorkspaceID: "ws", Session: wireSession{WorkspaceID: "ws", ID: "src", ProviderSessionID: psid},
		Turn: wireTurn{ID: "t-lost", Phase: "settled"}, Proof: proof}
	return ta.post(t, "/recover-binding", req, &out), out
}

// textProof is what forkgraph sends for a plain-text prompt: a key and the HMAC of the text.
func textProof(key []byte, text string) wireProof {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(text))
	var p wireProof
	p.TextDigest = &struct {
		Algorithm string `json:"algorithm"`
		Key       string `json:"key"`
		Digest    string `json:"digest"`
	}{"hmac-sha256", hex.EncodeToString(key), hex.EncodeToString(mac.Sum(nil))}
	return p
}

// TestRecoverBindingFindsTheTurnByItsProof: by client submit id first, by the text digest for a
// plain-text prompt; one match is found, two are ambiguous, none is absent; the history is only
// read.
func TestRecoverBindingFindsTheTurnByItsProof(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	first := ta.submit(t, "thread-1", "submit-1", contentPlainText, "Plan the migration")
	second := ta.submit(t, "thread-1", "", contentPlainText, "Write the tests")
	ta.submit(t, "thread-1", "submit-dup", contentMultimodal, "")
	ta.submit(t, "thread-1", "submit-dup", contentMultimodal, "")
	ta.submit(t, "thread-1", "", contentPlainText, "yes")
	ta.submit(t, "thread-1", "", contentPlainText, "yes")
	ta.submit(t, "thread-2", "submit-other", contentPlainText, "Plan the migration")
	before, err := os.ReadFile(ta.path)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("a key forkgraph derived for one turn")
	byID := wireProof{ClientSubmitID: "submit-1"}
	cases := []struct {
		name   string
		psid   string
		proof  wireProof
		answer string
		turn   string
	}{
		{"ByClientSubmitID", "thread-1", byID, answerFound, first.ProviderTurnID},
		{"ByTextDigest", "thread-1", textProof(key, "Write the tests"), answerFound, second.ProviderTurnID},
		{"TextIsExact", "thread-1", textProof(key, "Write the tests "), answerAbsent, ""},
		{"AnotherKeyIsAnotherDigest", "thread-1", func() wireProof {
			p := textProof([]byte("other key"), "Write the tests")
			p.TextDigest.Key = hex.EncodeToString(key)
			return p
		}(), answerAbsent, ""},
		{"AmbiguousSubmitID", "thread-1", wireProof{ClientSubmitID: "submit-dup"}, answerAmbiguous, ""},
		{"AmbiguousText", "thread-1", textProof(key, "yes"), answerAmbiguous, ""},
		{"OnlyThisProviderSession", "thread-2", byID, answerAbsent, ""},
		{"UnknownProviderSession", "thread-9", byID, answerAbsent, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, got := ta.recover(t, c.psid, c.proof)
			if status != http.StatusOK || got.Answer != c.answer || got.ProviderTurnID != c.turn {
				t.Fatalf("recover-binding = %d %+v, want %s %q", status, got, c.answer, c.turn)
			}
			if c.answer == answerFound && (got.ProviderSessionID != c.psid || !bytes.Contains(got.ProviderTurnBinding, []byte(c.turn))) {
				t.Fatalf("found %+v", got)
			}
		})
	}
	after, err := os.ReadFile(ta.path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("recover-binding changed the state file: it must only read")
	}
	var out errorResponse
	bad := textProof(key, "x")
	bad.TextDigest.Algorithm = "md5"
	req := recoverBindingRequest{WorkspaceID: "ws", Session: wireSession{ProviderSessionID: "thread-1"}, Proof: bad}
	if status := ta.post(t, "/recover-binding", req, &out); status != http.StatusBadRequest {
		t.Fatalf("an unknown digest algorithm answered %d", status)
	}
}

// TestRecoverBindingInAFork: a provider session made by /fork holds its parent's history up to the
// turn it was forked through, and not after.
func TestRecoverBindingInAFork(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	before := ta.submit(t, "thread-1", "submit-1", contentMultimodal, "")
	boundary := ta.submit(t, "thread-1", "submit-2", contentMultimodal, "")
	ta.submit(t, "thread-1", "submit-3", contentMultimodal, "")
	req := forkOf("r1")
	req.ThroughTurn.ProviderTurnID = boundary.ProviderTurnID
	status, child := ta.fork(t, req)
	if status != http.StatusOK || child.ProviderSessionID == "" {
		t.Fatalf("fork = %d %+v", status, child)
	}
	own := ta.submit(t, child.ProviderSessionID, "submit-4", contentMultimodal, "")
	for id, want := range map[string]string{"submit-1": before.ProviderTurnID, "submit-2": boundary.ProviderTurnID,
		"submit-3": "", "submit-4": own.ProviderTurnID} {
		_, got := ta.recover(t, child.ProviderSessionID, wireProof{ClientSubmitID: id})
		if got.ProviderTurnID != want {
			t.Fatalf("%s in the child: %+v, want %q", id, got, want)
		}
	}
}

func TestSubmitRefusesWhatItCannotRecord(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	for name, req := range map[string]submitRequest{
		"no session":           {WorkspaceID: "ws", Content: contentPlainText, Text: "x"},
		"unknown content":      {WorkspaceID: "ws", ProviderSessionID: "p", Content: "video"},
		"plain text, no text":  {WorkspaceID: "ws", ProviderSessionID: "p", Content: contentPlainText},
		"multimodal with text": {WorkspaceID: "ws", ProviderSessionID: "p", Content: contentMultimodal, Text: "x"},
	} {
		var out errorResponse
		if status := ta.post(t, "/submit", req, &out); status != http.StatusBadRequest || out.Error == "" {
			t.Fatalf("%s: %d %+v", name, status, out)
		}
	}
}

// TestHistoryIsTheWorkspaces: another workspace can neither add to a provider session's history
// nor find anything in it.
func TestHistoryIsTheWorkspaces(t *testing.T) {
	ta := newTestAdapter(t, "", 0)
	ta.submit(t, "thread-1", "submit-1", contentMultimodal, "")
	var out errorResponse
	req := submitRequest{WorkspaceID: "other", ProviderSessionID: "thread-1", ClientSubmitID: "x", Content: contentMultimodal}
	if status := ta.post(t, "/submit", req, &out); status != http.StatusForbidden {
		t.Fatalf("another workspace's submit answered %d %+v", status, out)
	}
	var got recoverBindingResponse
	other := recoverBindingRequest{WorkspaceID: "other", Session: wireSession{WorkspaceID: "other", ProviderSessionID: "thread-1"},
		Proof: wireProof{ClientSubmitID: "submit-1"}}
	if status := ta.post(t, "/recover-binding", other, &got); status != http.StatusOK || got.Answer != answerAbsent {
		t.Fatalf("another workspace's recovery answered %d %+v", status, got)
	}
}
