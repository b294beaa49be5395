package forkengine

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// SubmissionContent says what an agent runtime submitted to its provider as a turn's prompt. It
// decides which proof binding recovery may use to find the turn in the provider's history again.
type SubmissionContent string

// Submission contents.
const (
	// SubmissionPlainText is one complete text block and nothing else: the text's keyed digest
	// is a proof of its own.
	SubmissionPlainText SubmissionContent = "plain_text"
	// SubmissionMultimodal is anything more than one text block (images, attachments, several
	// blocks, context the runtime added): only the client submit id can prove which provider
	// turn it became.
	SubmissionMultimodal SubmissionContent = "multimodal"
	// SubmissionIncomplete says the runtime did not record the whole submission (it crashed
	// while sending, say): nothing proves which provider turn it became, so recovery fails closed.
	SubmissionIncomplete SubmissionContent = "incomplete"
)

// Valid reports whether c is a known content.
func (c SubmissionContent) Valid() bool {
	return c == SubmissionPlainText || c == SubmissionMultimodal || c == SubmissionIncomplete
}

// SubmissionReport is the proof a runtime gives with a turn report: what it submitted to the
// provider for the turn, so a binding lost later can be recovered (reference §4.6). Text is the
// single text block of a plain-text submission; the engine keeps only its keyed digest.
type SubmissionReport struct {
	ClientSubmitID string
	Content        SubmissionContent
	Text           *string
}

// Submission is what the store keeps of a turn's submission: never the text, only its digest
// under the turn's proof key (TurnProofKey).
type Submission struct {
	WorkspaceID    string
	SessionID      string
	TurnID         string
	ClientSubmitID string
	Content        SubmissionContent
	TextDigest     string // hex HMAC-SHA256 of the text under the turn's proof key; plain_text only
	RecordedAt     time.Time
}

// ReasonSubmissionChanged refuses a report whose submission differs from the one the turn
// already has: the proof is what was submitted, so it is recorded once (BAD_USER_INPUT).
const ReasonSubmissionChanged = "submission_changed"

// MaxSubmissionTextBytes bounds the text of a plain-text submission, as a message's content.
const MaxSubmissionTextBytes = MaxMessageBytes

// ServerKeySubmissionProof names the server key every turn's proof key derives from. It lives in
// the store, so every instance on one database derives the same keys.
const ServerKeySubmissionProof = "submission-proof"

// serverKeyBytes is the length of a generated server key.
const serverKeyBytes = 32

// proofKeyNamespace separates proof keys from any other use of the server key; versioned.
const proofKeyNamespace = "forkgraph/submission-proof/v1"

// cleanSubmission checks a reported submission. Errors: BAD_USER_INPUT.
func cleanSubmission(in *SubmissionReport) error {
	if in == nil {
		return nil
	}
	if !in.Content.Valid() {
		return Errorf(CodeInvalid, "submission content %q is not plain_text, multimodal or incomplete", in.Content)
	}
	if in.ClientSubmitID != "" {
		if len(in.ClientSubmitID) > MaxIDLength {
			return ReasonErrorf(CodeInvalid, ReasonInvalidID, "clientSubmitId is longer than %d characters", MaxIDLength)
		}
		if err := checkIdentifier("clientSubmitId", in.ClientSubmitID); err != nil {
			return err
		}
	}
	switch {
	case in.Content != SubmissionPlainText && in.Text != nil:
		return Errorf(CodeInvalid, "submission text is given only for plain_text content")
	case in.Content == SubmissionPlainText && (in.Text == nil || *in.Text == ""):
		return Errorf(CodeInvalid, "a plain_text submission needs its text")
	case in.Text != nil && len(*in.Text) > MaxSubmissionTextBytes:
		return Errorf(CodeInvalid, "submission text is larger than %d bytes", MaxSubmissionTextBytes)
	case in.Text != nil && !utf8.ValidString(*in.Text):
		return Errorf(CodeInvalid, "submission text must be valid UTF-8")
	}
	return nil
}

// TurnProofKey derives the key a turn's text digest is made with from the server key. Recovery
// hands it to the provider so the provider can digest the texts of its own history and compare,
// without forkgraph ever keeping or sending the text; a key opens one turn's digest only.
func TurnProofKey(serverKey []byte, workspaceID, sessionID, turnID string) []byte {
	mac := hmac.New(sha256.New, serverKey)
	for _, part := range []string{proofKeyNamespace, workspaceID, sessionID, turnID} {
		mac.Write([]byte(part))
		mac.Write([]byte{0})
	}
	return mac.Sum(nil)
}

// TextDigest is the hex HMAC-SHA256 of text under key: what a plain-text submission keeps, and
// what a provider computes over its own history to find the turn.
func TextDigest(key []byte, text string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(text))
	return hex.EncodeToString(mac.Sum(nil))
}

// submission builds the record a report asks for, digesting its text under the turn's proof key.
func (e *Engine) submission(ctx context.Context, in TurnReport) (*Submission, error) {
	if in.Submission == nil {
		return nil, nil
	}
	sub := &Submission{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, TurnID: in.ID,
		ClientSubmitID: in.Submission.ClientSubmitID, Content: in.Submission.Content}
	if in.Submission.Text != nil {
		key, err := e.proofKeys.serverKey(ctx, e.store)
		if err != nil {
			return nil, err
		}
		sub.TextDigest = TextDigest(TurnProofKey(key, in.WorkspaceID, in.SessionID, in.ID), *in.Submission.Text)
	}
	return sub, nil
}

// recordSubmission stores a turn's submission the first time it is reported; a later report of
// the same one writes nothing, of another is refused (submission_changed). The turn row must be
// written first (the submission refers to it).
func recordSubmission(ctx context.Context, tx Tx, sub *Submission, at time.Time) error {
	if sub == nil {
		return nil
	}
	stored, err := tx.GetSubmission(ctx, sub.WorkspaceID, sub.TurnID)
	switch {
	case err == nil:
		if stored.ClientSubmitID != sub.ClientSubmitID || stored.Content != sub.Content || stored.TextDigest != sub.TextDigest {
			return ReasonErrorf(CodeInvalid, ReasonSubmissionChanged,
				"turn %q already has another submission; it is recorded once", sub.TurnID)
		}
		return nil
	case !errors.Is(err, ErrNotFound):
		return fmt.Errorf("read submission of turn %s: %w", sub.TurnID, err)
	}
	next := *sub
	next.RecordedAt = at
	if err := tx.InsertSubmission(ctx, next); err != nil {
		return fmt.Errorf("record submission of turn %s: %w", sub.TurnID, err)
	}
	return nil
}

// proofKeys holds the server key once it has been read: it never changes, so one read per
// process is enough. Until it is read (or while the store cannot be reached) every use tries
// again.
type proofKeys struct {
	mu  sync.Mutex
	key []byte
}

// serverKey returns the store's submission-proof key, generating and storing one the first time
// any instance needs it: a concurrent first use by another instance wins or loses the claim, and
// both then hold the one the store kept.
func (p *proofKeys) serverKey(ctx context.Context, s Store) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.key != nil {
		return p.key, nil
	}
	candidate := make([]byte, serverKeyBytes)
	if _, err := rand.Read(candidate); err != nil {
		return nil, fmt.Errorf("generate the submission proof key: %w", err)
	}
	var key []byte
	err := s.Update(ctx, func(tx Tx) error {
		var err error
		key, err = tx.ClaimServerKey(ctx, ServerKeySubmissionProof, candidate)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read the submission proof key: %w", err)
	}
	if len(key) < serverKeyBytes {
		return nil, fmt.Errorf("the stored submission proof key has %d bytes, want %d", len(key), serverKeyBytes)
	}
	p.key = key
	return key, nil
}
