package forkengine

import (
	"errors"
	"fmt"
)

// Code is a stable error code. The set is append-only: never reorder, rename or remove a code,
// clients match on them. The string values are the GraphQL `extensions.code` values.
type Code string

// Error codes.
const (
	CodeInvalid             Code = "BAD_USER_INPUT"
	CodeUnauthenticated     Code = "UNAUTHENTICATED"
	CodeForbidden           Code = "FORBIDDEN"
	CodeNotFound            Code = "NOT_FOUND"
	CodeForkConflict        Code = "FORK_CONFLICT"
	CodeForkInProgress      Code = "FORK_IN_PROGRESS"
	CodeForkUnsupported     Code = "FORK_UNSUPPORTED"
	CodeAcknowledgeConflict Code = "ACKNOWLEDGE_CONFLICT"
	CodeInternal            Code = "INTERNAL_SERVER_ERROR"
	CodeResumeRequired      Code = "RESUME_REQUIRED" // a subscriber fell behind; resume from its last cursor
	CodeRateLimited         Code = "RATE_LIMITED"
	CodeProviderUnavailable Code = "PROVIDER_UNAVAILABLE" // the provider could not be reached; retryable
	CodeReconcileConflict   Code = "RECONCILE_CONFLICT"   // reconcile or abandon of an operation that is not unknown
	CodeUnavailable         Code = "UNAVAILABLE"          // the database could not be reached; retryable
	// CodeTokenExpired ends a stream (websocket close 4403, SSE's last event) whose credential
	// expired: the client gets a fresh token and resumes from its last cursor.
	CodeTokenExpired Code = "TOKEN_EXPIRED"
	// CodeTokenRevoked ends a stream whose static token a reload of the tokens file removed or
	// changed.
	CodeTokenRevoked Code = "TOKEN_REVOKED"
)

// Boundary and conflict reason codes (stable; reference §3.12 without its prefix).
const (
	ReasonSourceNotRoot          = "source_not_root"
	ReasonProviderSessionMissing = "provider_session_missing"
	ReasonTurnNotFound           = "turn_not_found"
	ReasonTurnNotSettled         = "turn_not_settled"
	ReasonTurnSequenceMissing    = "turn_sequence_missing"
	ReasonProviderTurnMissing    = "provider_turn_missing"
	ReasonProviderTurnUnforkable = "provider_turn_unforkable"
	ReasonBoundaryMismatch       = "provider_turn_boundary_mismatch"
	ReasonPrefixTurnMissing      = "prefix_turn_missing"
	ReasonRequestConflict        = "request_conflict"
	ReasonTargetReserved         = "target_reserved"
	ReasonSourceDeleted          = "source_deleted"
	ReasonSourceState            = "source_state"
	ReasonInconsistentLineage    = "inconsistent_lineage"
	ReasonTurnPhaseBackwards     = "turn_phase_backwards"
	ReasonTurnOutcomeChanged     = "turn_outcome_changed"
	ReasonDriverDrift            = "driver_drift"
	ReasonReconciledAbsent       = "reconciled_absent" // ForkOperation.ErrorReason
	ReasonAbandoned              = "abandoned"         // ForkOperation.ErrorReason
	ReasonNotUnknown             = "not_unknown"       // with CodeReconcileConflict
	ReasonTurnSettled            = "turn_settled"      // a report would change a settled turn
	// ReasonProviderTurnDuplicate: another turn of the session is bound to that provider turn
	// (a report, or a recovered binding, naming it is refused).
	ReasonProviderTurnDuplicate = "provider_turn_duplicate"
	// ReasonProviderBindingChanged: a report would change the provider turn id or binding of a
	// turn that is bound; only binding recovery writes a binding, and only an empty one.
	ReasonProviderBindingChanged = "provider_binding_changed"
	// ReasonProviderSessionChanged: a report would change a session's provider session id (or
	// its provider) once one is set.
	ReasonProviderSessionChanged = "provider_session_changed"
	// ReasonForkingDisabled: forking is switched off for the workspace or the whole server
	// (with CodeForkUnsupported).
	ReasonForkingDisabled = "forking_disabled"
	// ReasonDuplicate: ErrDuplicate, a store write broke a unique rule (internal unless mapped).
	ReasonDuplicate = "duplicate_row"
)

// Error is the one domain error type. Code is stable; Reason is an optional stable sub-code;
// Message is safe to show to clients; Err is the wrapped cause (never shown).
type Error struct {
	Code      Code
	Reason    string
	Message   string
	Retryable bool
	Err       error
}

// Error renders the message, the reason in parentheses and the wrapped cause.
func (e *Error) Error() string {
	msg := e.Message
	if e.Reason != "" {
		msg = fmt.Sprintf("%s (%s)", msg, e.Reason)
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause, so errors.Is and errors.As see through an Error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error by Code and, when the target names one, Reason. So
// errors.Is(err, &Error{Code: CodeForkConflict}) works through any wrapping.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Reason == "" || t.Reason == e.Reason)
}

// Errorf builds an Error with a client-safe message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ReasonErrorf builds an Error carrying a stable reason code.
func ReasonErrorf(code Code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, CodeInternal for any other
// error, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrorReason returns the reason of the first *Error in err's chain, or "".
func ErrorReason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// Unavailable is the retryable UNAVAILABLE error of a request that failed because the database
// could not be reached (a PostgreSQL restart, a lost connection, SQLite disk errors): nothing the
// client sent is wrong, and the same request may well work in a moment. The cause is kept for
// the log, never shown.
func Unavailable(cause error) *Error {
	return &Error{Code: CodeUnavailable, Retryable: true, Err: cause,
		Message: "the database is unavailable; try again"}
}

// Sentinels the stores return. They are Errors like every other, so a caller asks one way:
// errors.Is(err, ErrNotFound) holds for a store miss and for any NOT_FOUND the engine coded
// itself (Is matches by code), and ErrorCode(err) is CodeNotFound for both. The engine still maps
// a miss to a client error naming what is missing; one it passes on unmapped shows as NOT_FOUND
// "not found" rather than as an internal error. A duplicate is internal unless the engine maps
// it (a lost race it retries, a request id already taken): its reason ReasonDuplicate is what
// errors.Is(err, ErrDuplicate) matches, so no other internal error passes for one.
var (
	// ErrNotFound is returned by a store read that finds no row.
	ErrNotFound = &Error{Code: CodeNotFound, Message: "not found"}
	// ErrDuplicate is returned by a store write that violates a unique rule (one operation per
	// request id, one active operation per boundary, one reservation per target id, ids).
	ErrDuplicate = &Error{Code: CodeInternal, Reason: ReasonDuplicate, Message: "duplicate"}
)
