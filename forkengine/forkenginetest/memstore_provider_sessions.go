package forkenginetest

import (
	"context"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// providerSessionKey names one provider session: provider session ids are unique per provider,
// not per workspace.
type providerSessionKey struct{ provider, id string }

// ProviderSessionOwner returns the workspace that claimed the provider session first.
func (v memView) ProviderSessionOwner(_ context.Context, provider, providerSessionID string) (string, error) {
	owner, ok := v.load().owners[providerSessionKey{provider, providerSessionID}]
	if !ok {
		return "", fmt.Errorf("provider session %s of %s: %w", providerSessionID, provider, forkengine.ErrNotFound)
	}
	return owner, nil
}

// ClaimProviderSession records c's workspace as the owner unless one already is, and returns the
// owner. Update calls are serialised, so the first committed claim is the one every later
// transaction reads.
func (tx *memTx) ClaimProviderSession(_ context.Context, c forkengine.ProviderSessionClaim) (string, error) {
	st := tx.current()
	k := providerSessionKey{c.Provider, c.ProviderSessionID}
	if owner, ok := st.owners[k]; ok {
		return owner, nil
	}
	st.owners[k] = c.WorkspaceID
	return c.WorkspaceID, nil
}
