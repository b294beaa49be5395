package forkengine

import (
	"context"
	"encoding/json"
)

// RecoveryAnswer is what a driver found when it looked a turn up in the provider's history.
type RecoveryAnswer string

// Recovery answers.
const (
	// RecoveryFound: exactly one provider turn matches the proof; the result names it.
	RecoveryFound RecoveryAnswer = "found"
	// RecoveryAbsent: no provider turn of the session matches.
	RecoveryAbsent RecoveryAnswer = "absent"
	// RecoveryAmbiguous: more than one matches, so none can be trusted.
	RecoveryAmbiguous RecoveryAnswer = "ambiguous"
)

// BindingProof is what proves which provider turn a turn became, recorded when the runtime
// submitted it. ClientSubmitID is the first choice; for a plain-text submission TextKey and
// TextDigest let the provider digest the user texts of its own history (TextDigest(TextKey,
// text)) and compare, without the text itself. Either may be empty, never both.
type BindingProof struct {
	ClientSubmitID string
	TextKey        []byte
	TextDigest     string // hex
}

// BindingRecoveryRequest asks a driver to find, read-only, the provider turn a settled turn of
// Session became, by Proof. The driver must never pick a turn by its position in the history.
type BindingRecoveryRequest struct {
	WorkspaceID string
	Session     Session
	Turn        Turn
	Proof       BindingProof
}

// BindingRecoveryResult is a driver's answer. For RecoveryFound it names the provider session the
// turn belongs to (which must be the session's own), the provider turn id and its binding (a
// non-empty JSON object); Error explains any other answer, for the server's log only.
type BindingRecoveryResult struct {
	Answer              RecoveryAnswer
	ProviderSessionID   string
	ProviderTurnID      string
	ProviderTurnBinding json.RawMessage
	Error               string
}

// BindingRecoverer is a Driver that can look a turn up in the provider's history by the proof
// recorded when it was submitted (reference §4.6). It only reads: it never forks and never
// changes the provider's state. An error means nothing was found. A driver says it can recover
// by implementing this and setting Descriptor.RecoverBinding.
type BindingRecoverer interface {
	RecoverBinding(ctx context.Context, req BindingRecoveryRequest) (BindingRecoveryResult, error)
}
