package forkengine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ReasonProviderSessionOwned marks the FORBIDDEN of a provider session that belongs to another
// workspace: reported there first, or made there by a fork.
const ReasonProviderSessionOwned = "provider_session_owned"

// errChildOwned is the problem of an acceptance whose child provider session belongs to another
// workspace: a provider that names it has either mixed up its tenants or been told another
// tenant's session, so the answer is not evidence of a child of this fork (an invalid result).
var errChildOwned = errors.New("the child provider session belongs to another workspace")

// ownedElsewhere is the refusal of a provider session another workspace owns. It names neither
// that workspace nor anything of it.
func ownedElsewhere(provider, providerSessionID string) error {
	return ReasonErrorf(CodeForbidden, ReasonProviderSessionOwned,
		"provider session %q of provider %q belongs to another workspace", providerSessionID, provider)
}

// claimReported makes the workspace of a reported session the owner of its provider session, when
// the report gives the session one it did not have. A provider session is owned by the first
// workspace that reports it; another that reports it is refused. A session that kept its provider
// session is not claimed again, so an unchanged re-report costs no statement, and a session that
// shared one with another workspace before ownership existed keeps working (the fork is what
// checkOwnedSource refuses). Errors: FORBIDDEN reason provider_session_owned.
func claimReported(ctx context.Context, tx Tx, stored Session, found bool, next Session, at time.Time) error {
	if next.ProviderSessionID == "" || (found && stored.Provider == next.Provider && stored.ProviderSessionID == next.ProviderSessionID) {
		return nil
	}
	owned, err := claim(ctx, tx, ProviderSessionClaim{Provider: next.Provider, ProviderSessionID: next.ProviderSessionID,
		WorkspaceID: next.WorkspaceID, At: at})
	if err == nil && !owned {
		err = ownedElsewhere(next.Provider, next.ProviderSessionID)
	}
	return err
}

// claim runs ClaimProviderSession and reports whether the claim holds: the claiming workspace
// owns the provider session.
func claim(ctx context.Context, tx Tx, c ProviderSessionClaim) (bool, error) {
	owner, err := tx.ClaimProviderSession(ctx, c)
	if err != nil {
		return false, fmt.Errorf("claim provider session %s: %w", c.ProviderSessionID, err)
	}
	return owner == c.WorkspaceID, nil
}

// checkOwnedSource refuses to fork a source whose provider session another workspace owns: the
// provider would copy that workspace's conversation into this one. Only a database from before
// ownership holds such a session (its reports were never refused); one never claimed (written
// past the engine) is nobody else's. Errors: FORBIDDEN reason provider_session_owned.
func checkOwnedSource(ctx context.Context, r Reader, source Session) error {
	owner, err := r.ProviderSessionOwner(ctx, source.Provider, source.ProviderSessionID)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("read the owner of provider session %s: %w", source.ProviderSessionID, err)
	case owner != source.WorkspaceID:
		return ownedElsewhere(source.Provider, source.ProviderSessionID)
	}
	return nil
}

// claimChild makes the fork's workspace the owner of the child the provider made, in the
// transaction that records the acceptance. errChildOwned when another workspace owns it.
func claimChild(ctx context.Context, tx Tx, op ForkOperation, at time.Time) error {
	owned, err := claim(ctx, tx, ProviderSessionClaim{Provider: op.Provider, ProviderSessionID: op.TargetProviderSessionID,
		WorkspaceID: op.WorkspaceID, At: at})
	if err == nil && !owned {
		err = errChildOwned
	}
	return err
}

// childOwnedVerdict is the verdict of an acceptance whose child another workspace owns: an
// invalid result, so unknown, asked about again by reconciliation, never dispatched again.
func childOwnedVerdict() verdict {
	v := settled(StatusUnknown, errTextInvalidResult+": "+errChildOwned.Error())
	v.record = becomeUnknown(v.record)
	return v
}

// recordAcceptance records an acceptance alone (provider_accepted) with the claim of its child,
// for when its commit could not be written with it; the commit follows from provider_accepted.
// errChildOwned when another workspace owns the child (nothing is written).
func (e *Engine) recordAcceptance(ctx context.Context, op ForkOperation, v verdict) (ForkOperation, error) {
	out := op
	err := e.update(ctx, func(tx Tx, c *changes) error {
		next, moved, err := moveOperation(ctx, tx, c, op, StatusProviderAccepted, v.record)
		out = next
		if err != nil || !moved {
			return err
		}
		return claimChild(ctx, tx, next, c.at)
	})
	if err != nil {
		return op, err
	}
	return out, nil
}
