package forkenginetest

import (
	"bytes"
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

// ProviderTurnOwner returns the lowest-sequence turn of the session other than exceptTurnID
// bound to providerTurnID; a legacy row copying its own id owns nothing.
func (v memView) ProviderTurnOwner(_ context.Context, ws, sessionID, providerTurnID, exceptTurnID string) (forkengine.Turn, error) {
	var owner forkengine.Turn
	found := false
	for k, t := range v.load().turns {
		if k.ws != ws || t.SessionID != sessionID || t.ID == exceptTurnID || t.ProviderTurnID != providerTurnID ||
			t.ProviderTurnID == t.ID {
			continue
		}
		if !found || t.Sequence < owner.Sequence {
			owner, found = t, true
		}
	}
	if !found {
		return forkengine.Turn{}, notFound("owner of provider turn", ws, providerTurnID)
	}
	return owner.Clone(), nil
}

// BindTurn writes next's binding over a settled turn that still has expect's binding.
func (tx *memTx) BindTurn(_ context.Context, next, expect forkengine.Turn) (bool, error) {
	st := tx.current()
	k := rowKey{next.WorkspaceID, next.ID}
	t, ok := st.turns[k]
	if !ok || t.SessionID != next.SessionID || t.Phase != forkengine.PhaseSettled ||
		t.ProviderTurnID != expect.ProviderTurnID || !bytes.Equal(t.ProviderTurnBinding, cloneRaw(expect.ProviderTurnBinding)) {
		return false, nil
	}
	t.ProviderTurnID, t.ProviderTurnBinding = next.ProviderTurnID, cloneRaw(next.ProviderTurnBinding)
	t.UpdatedAt = storedTime(next.UpdatedAt)
	st.turns[k] = t
	return true, nil
}
