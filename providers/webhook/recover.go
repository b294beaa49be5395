package webhook

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

var _ forkengine.BindingRecoverer = (*Driver)(nil)

// textDigestAlgorithm names how a plain-text proof was made: HMAC-SHA256 under key, in hex.
const textDigestAlgorithm = "hmac-sha256"

// RecoverBinding asks the adapter to find, read-only, the provider turn a turn whose binding was
// lost became (POST /recover-binding, with the session, the turn and the proof recorded at
// submit). Only a 2xx answer whose body decodes and says "found", "absent" or "ambiguous" is an
// answer; anything else (a transport failure or timeout, a non-2xx, an undecodable or oversized
// body, another answer) is an error, which the engine treats as nothing found: a fork through the
// turn keeps its refusal. A transport failure or a 5xx wraps forkengine.ErrProviderUnavailable.
// The engine checks a found answer before it writes anything.
func (d *Driver) RecoverBinding(ctx context.Context, req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
	body := recoverBindingRequest{WorkspaceID: req.WorkspaceID, Session: toWireSession(req.Session),
		Turn: toWireTurn(req.Turn), Proof: wireProof{ClientSubmitID: req.Proof.ClientSubmitID}}
	if req.Proof.TextDigest != "" {
		body.Proof.TextDigest = &wireTextDigest{Algorithm: textDigestAlgorithm,
			Key: hex.EncodeToString(req.Proof.TextKey), Digest: req.Proof.TextDigest}
	}
	r, err := d.post(ctx, "/recover-binding", body, nil)
	if err == nil && !r.ok() {
		err = r.statusError("/recover-binding")
	}
	if err != nil {
		return forkengine.BindingRecoveryResult{}, fmt.Errorf("webhook recover binding of turn %s: %w", req.Turn.ID, r.availability(err))
	}
	var out recoverBindingResponse
	if err := json.Unmarshal(r.body, &out); err != nil {
		return forkengine.BindingRecoveryResult{}, fmt.Errorf("webhook recover binding of turn %s: decode response: %w", req.Turn.ID, err)
	}
	switch answer := forkengine.RecoveryAnswer(out.Answer); answer {
	case forkengine.RecoveryFound, forkengine.RecoveryAbsent, forkengine.RecoveryAmbiguous:
		return forkengine.BindingRecoveryResult{Answer: answer, ProviderSessionID: out.ProviderSessionID,
			ProviderTurnID: out.ProviderTurnID, ProviderTurnBinding: out.ProviderTurnBinding, Error: out.Error}, nil
	}
	return forkengine.BindingRecoveryResult{}, fmt.Errorf("webhook recover binding of turn %s: response has no valid answer (%q)",
		req.Turn.ID, out.Answer)
}
