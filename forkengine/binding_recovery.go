package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// Binding recovery (reference §4.6): a settled turn whose provider binding was lost, or that the
// provider's probe refuses, is RECOVERY_REQUIRED. A fork through it asks the driver once to find
// the turn in the provider's history by the proof recorded when it was submitted, and writes what
// it finds by a compare and swap on the empty binding. Only StartFork does this: reads never
// repair (TurnForkability probes and nothing more).

// errNoRecovery marks the attempts that end before asking the provider: nothing to log above debug.
var errNoRecovery = errors.New("binding recovery not possible")

// recoverBinding tries once to give turn, a settled turn of source, the binding the provider's
// history has for it, and reports whether the turn now holds it. Every failure is logged and
// answered false, so the caller returns its own refusal with its stable reason: what went wrong
// in the recovery is never shown to the client.
func (e *Engine) recoverBinding(ctx context.Context, source Session, turn Turn) bool {
	err := e.tryRecoverBinding(ctx, source, turn)
	attrs := []any{"workspace", source.WorkspaceID, "session", source.ID, "turn", turn.ID}
	switch {
	case err == nil:
		e.log.Info("provider turn binding recovered", attrs...)
		return true
	case errors.Is(err, errNoRecovery):
		e.log.Debug("provider turn binding not recovered", append(attrs, "error", err)...)
	default:
		e.log.Warn("provider turn binding not recovered", append(attrs, "error", err)...)
	}
	return false
}

// tryRecoverBinding is recoverBinding with the reason it failed.
func (e *Engine) tryRecoverBinding(ctx context.Context, source Session, turn Turn) error {
	if !turn.Settled() {
		return fmt.Errorf("%w: the turn is not settled", errNoRecovery)
	}
	proof, err := e.bindingProof(ctx, turn)
	if err != nil {
		return err
	}
	recoverer, err := e.recoverer(ctx, source)
	if err != nil {
		return err
	}
	callCtx, cancel := context.WithTimeout(ctx, e.cfg.DispatchTimeout)
	defer cancel()
	res, err := recoverer.RecoverBinding(callCtx, BindingRecoveryRequest{WorkspaceID: source.WorkspaceID,
		Session: source, Turn: turn, Proof: proof})
	if err != nil {
		return fmt.Errorf("the provider could not look the turn up: %w", err)
	}
	if err := checkRecovered(source, turn, res); err != nil {
		return err
	}
	return e.bindRecovered(ctx, source, turn, res)
}

// bindingProof is the proof recorded for turn, as the provider is given it. Multimodal content
// proves nothing but its client submit id; incomplete content nothing at all.
func (e *Engine) bindingProof(ctx context.Context, turn Turn) (BindingProof, error) {
	sub, err := e.store.GetSubmission(ctx, turn.WorkspaceID, turn.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		return BindingProof{}, fmt.Errorf("%w: no submission was reported for the turn", errNoRecovery)
	case err != nil:
		return BindingProof{}, fmt.Errorf("read the submission of turn %s: %w", turn.ID, err)
	case sub.Content == SubmissionIncomplete:
		return BindingProof{}, fmt.Errorf("%w: the runtime recorded the submission as incomplete", errNoRecovery)
	}
	proof := BindingProof{ClientSubmitID: sub.ClientSubmitID}
	if sub.Content == SubmissionPlainText && sub.TextDigest != "" {
		key, err := e.proofKeys.serverKey(ctx, e.store)
		if err != nil {
			return BindingProof{}, err
		}
		proof.TextKey, proof.TextDigest = TurnProofKey(key, turn.WorkspaceID, turn.SessionID, turn.ID), sub.TextDigest
	}
	if proof.ClientSubmitID == "" && proof.TextDigest == "" {
		return BindingProof{}, fmt.Errorf("%w: a %s submission without a client submit id proves nothing", errNoRecovery, sub.Content)
	}
	return proof, nil
}

// recoverer is the source's driver when it can recover bindings (it implements BindingRecoverer
// and its descriptor says so).
func (e *Engine) recoverer(ctx context.Context, source Session) (BindingRecoverer, error) {
	driver := e.cfg.Drivers[source.Provider]
	recoverer, ok := driver.(BindingRecoverer)
	if !ok {
		return nil, fmt.Errorf("%w: the driver of provider %q cannot recover bindings", errNoRecovery, source.Provider)
	}
	desc, err := driver.Describe(ctx, source)
	switch {
	case err != nil:
		return nil, fmt.Errorf("describe session %s: %w", source.ID, err)
	case !desc.RecoverBinding:
		return nil, fmt.Errorf("%w: the provider does not recover bindings for this session", errNoRecovery)
	}
	return recoverer, nil
}

// checkRecovered validates a driver's answer before anything is written: one provider turn,
// of the source's own provider session, with a usable binding. Provider answers are data: they
// are held to the rules of a report.
func checkRecovered(source Session, turn Turn, res BindingRecoveryResult) error {
	switch {
	case res.Answer != RecoveryFound:
		return fmt.Errorf("the provider answered %q: %s", res.Answer, res.Error)
	case res.ProviderSessionID != source.ProviderSessionID:
		return fmt.Errorf("the provider found the turn in provider session %q, not the source's %q",
			res.ProviderSessionID, source.ProviderSessionID)
	case res.ProviderTurnID == "" || res.ProviderTurnID == turn.ID:
		return errors.New("the provider found no provider turn id of its own for the turn")
	case len(res.ProviderTurnID) > MaxTextLength || checkIdentifier("providerTurnId", res.ProviderTurnID) != nil:
		return errors.New("the provider turn id it found breaks the id rules")
	case len(res.ProviderTurnBinding) > MaxJSONBytes || !isNonEmptyObject(res.ProviderTurnBinding):
		return errors.New("the binding it found is not a non-empty JSON object within the size limit")
	}
	return nil
}

// bindRecovered writes the binding res found onto turn, under the source's session lock (the one
// every report of its turns takes): a compare and swap on the empty binding the recovery started
// from. A turn bound meanwhile to exactly that binding is as good; to another, or a provider turn
// id another turn of the session is bound to, or a source that moved to another provider
// session, is refused. The repair is a TURN_UPSERTED event of the turn, so every subscriber sees
// it become BOUND.
func (e *Engine) bindRecovered(ctx context.Context, source Session, turn Turn, res BindingRecoveryResult) error {
	return e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(source.WorkspaceID, source.ID)); err != nil {
			return err
		}
		current, err := liveSession(ctx, tx, source.WorkspaceID, source.ID)
		if err != nil {
			return err
		}
		if current.ProviderSessionID != res.ProviderSessionID {
			return errors.New("the source moved to another provider session during the recovery")
		}
		stored, err := tx.GetTurn(ctx, turn.WorkspaceID, turn.ID)
		if err != nil {
			return readError(err, "turn", turn.ID)
		}
		next := stored
		next.ProviderTurnID, next.ProviderTurnBinding, next.UpdatedAt = res.ProviderTurnID, res.ProviderTurnBinding, c.at
		switch {
		case stored.HasProviderBinding() && stored.ProviderTurnID == next.ProviderTurnID &&
			sameJSON(stored.ProviderTurnBinding, next.ProviderTurnBinding):
			return nil // bound to what was found already: nothing to write
		case stored.HasProviderBinding():
			return errors.New("the turn is bound to another provider turn; a binding is never replaced")
		case stored.ProviderTurnID != "" && stored.ProviderTurnID != stored.ID && stored.ProviderTurnID != next.ProviderTurnID:
			return fmt.Errorf("the turn names provider turn %q, the provider found %q", stored.ProviderTurnID, next.ProviderTurnID)
		}
		if err := checkProviderTurnFree(ctx, tx, next); err != nil {
			return err
		}
		swapped, err := tx.BindTurn(ctx, next, stored)
		switch {
		case err != nil:
			return fmt.Errorf("bind turn %s: %w", turn.ID, err)
		case !swapped:
			return errors.New("the turn changed during the recovery")
		}
		c.turn(next)
		return nil
	})
}
