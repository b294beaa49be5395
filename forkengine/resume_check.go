package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// VerificationStatus is the answer of the resume check (reference §5.4).
type VerificationStatus string

// Verification statuses.
const (
	// VerificationVerified: the session is the committed target of the fork its lineage names,
	// with the provider session that fork made. A runtime may resume it.
	VerificationVerified VerificationStatus = "verified"
	// VerificationNotAFork: the session has no lineage as a target, so there is no fork identity
	// to verify. A runtime resumes it as any session.
	VerificationNotAFork VerificationStatus = "not_a_fork"
	// VerificationUnverified: the session has a lineage but the fork identity does not hold;
	// Reason says which check failed. A runtime must not resume it.
	VerificationUnverified VerificationStatus = "unverified"
)

// Reasons of an unverified fork identity, one per check of §5.4, in the order they run.
const (
	ReasonOperationMissing        = "operation_missing"         // the lineage names no operation that exists
	ReasonOperationNotCommitted   = "operation_not_committed"   // the operation is not committed
	ReasonTargetMismatch          = "target_mismatch"           // the operation's target is another session
	ReasonProviderSessionMismatch = "provider_session_mismatch" // the session's provider session is not the one the fork made
)

// ForkVerification is the resume check's answer. Lineage and Operation are what was found (nil
// when not); Reason is set only when Status is unverified.
type ForkVerification struct {
	Status    VerificationStatus
	Reason    string
	Session   Session
	Lineage   *Lineage
	Operation *ForkOperation
}

// Resumable reports whether a runtime may resume the session: verified, or no fork at all.
func (v ForkVerification) Resumable() bool { return v.Status != VerificationUnverified }

// VerifyForkedSession is the check a runtime makes before it resumes a session that may be a
// fork, so that it fails closed on a fork whose identity does not hold (reference §5.4): the
// session's lineage as a target must name an operation that exists, is committed, has this
// session as its target and the session's provider session id as its target provider session.
// It only reads; a soft-deleted session is checked as any other. Errors: BAD_USER_INPUT (ids),
// NOT_FOUND (the session does not exist).
func (e *Engine) VerifyForkedSession(ctx context.Context, workspaceID, sessionID string) (ForkVerification, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}, idField{"sessionId", &sessionID}); err != nil {
		return ForkVerification{}, err
	}
	session, err := e.store.GetSession(ctx, workspaceID, sessionID)
	if err != nil {
		return ForkVerification{}, readError(err, "session", sessionID)
	}
	out := ForkVerification{Status: VerificationNotAFork, Session: session}
	lineages, err := e.store.LineagesByTargetIDs(ctx, workspaceID, []string{sessionID})
	if err != nil {
		return ForkVerification{}, fmt.Errorf("read the lineage of %s: %w", sessionID, err)
	}
	lineage, forked := lineages[sessionID]
	if !forked {
		return out, nil
	}
	out.Lineage = &lineage
	op, err := e.store.GetOperation(ctx, workspaceID, lineage.OperationID)
	switch {
	case errors.Is(err, ErrNotFound):
		return out.unverified(ReasonOperationMissing), nil
	case err != nil:
		return ForkVerification{}, fmt.Errorf("read fork operation %s: %w", lineage.OperationID, err)
	}
	op.Snapshot = Snapshot{} // the check reads the identity, not the transcript
	out.Operation = &op
	switch {
	case op.Status != StatusCommitted:
		return out.unverified(ReasonOperationNotCommitted), nil
	case op.TargetSessionID != sessionID:
		return out.unverified(ReasonTargetMismatch), nil
	case op.TargetProviderSessionID == "" || op.TargetProviderSessionID != session.ProviderSessionID:
		return out.unverified(ReasonProviderSessionMismatch), nil
	}
	out.Status = VerificationVerified
	return out, nil
}

func (v ForkVerification) unverified(reason string) ForkVerification {
	v.Status, v.Reason = VerificationUnverified, reason
	return v
}
