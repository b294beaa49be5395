package forkengine

import (
	"context"
	"errors"
)

// ReconcileAnswer is what a driver knows about a fork whose delivery was unknown.
type ReconcileAnswer string

// Reconcile answers.
const (
	// ReconcileFound: the provider has the child; the result carries it, validated like a fork
	// result, and the operation is committed through the normal commit.
	ReconcileFound ReconcileAnswer = "found"
	// ReconcileAbsent: the provider guarantees no child exists for the request and none will
	// appear; the operation fails (reason reconciled_absent) and its boundary is free again.
	ReconcileAbsent ReconcileAnswer = "absent"
	// ReconcileUnknown: the provider cannot tell yet; the engine asks again later.
	ReconcileUnknown ReconcileAnswer = "unknown"
)

// ReconcileRequest asks what became of the fork of one operation. It carries what the Fork call
// carried, so a driver can find the child by the request id (or operation id) it sent then, and
// which attempt this is (1 for the first). Its workspace and RequestedBy (the subject who asked
// for the fork; "" in open mode) are the fork's.
type ReconcileRequest struct {
	ForkRequest
	Attempt int
}

// ReconcileResult is a driver's answer to Reconcile. For ReconcileFound the child fields are
// those of a ForkResult with disposition accepted.
type ReconcileResult struct {
	Answer            ReconcileAnswer
	ProviderSessionID string
	StateBindingMode  BindingMode
	TurnBindings      []TurnBinding
	Receipt           string
	Error             string // the provider's explanation; on found it makes the answer unverifiable
}

// Reconciler is a Driver that can answer "what became of the fork with this request id?". It is
// never a second Fork: it only looks. An error means unknown. A driver says it can reconcile by
// implementing this and setting Descriptor.Reconcile.
type Reconciler interface {
	Reconcile(ctx context.Context, req ReconcileRequest) (ReconcileResult, error)
}

// SessionValidator is a Driver that checks a session's settings when it is reported, so a
// malformed provider configuration is refused then (its error, usually BAD_USER_INPUT with a
// reason of the driver's) rather than surfacing later as an unforkable session.
type SessionValidator interface {
	ValidateSession(s Session) error
}

// ErrProviderUnavailable marks a driver error that means the provider could not be reached (it
// is down, or did not answer): a fork requested then gets the retryable PROVIDER_UNAVAILABLE, not
// FORK_UNSUPPORTED, which clients read as permanent. Drivers wrap it.
var ErrProviderUnavailable = errors.New("provider unavailable")
