package forkenginetest

import (
	"context"
	"fmt"
	"slices"

	"github.com/forkgraph/forkgraph/forkengine"
)

// GetSubmission returns the submission recorded for a turn, or ErrNotFound.
func (v memView) GetSubmission(_ context.Context, ws, turnID string) (forkengine.Submission, error) {
	sub, ok := v.load().submissions[rowKey{ws, turnID}]
	if !ok {
		return forkengine.Submission{}, notFound("submission of turn", ws, turnID)
	}
	return sub, nil
}

// InsertSubmission records a turn's submission: ErrNotFound without the turn, ErrDuplicate when
// the turn has one.
func (tx *memTx) InsertSubmission(_ context.Context, sub forkengine.Submission) error {
	st := tx.current()
	k := rowKey{sub.WorkspaceID, sub.TurnID}
	if t, ok := st.turns[k]; !ok || t.SessionID != sub.SessionID {
		return notFound("turn", sub.WorkspaceID, sub.TurnID)
	}
	if _, taken := st.submissions[k]; taken {
		return duplicate("turn %s already has a submission", sub.TurnID)
	}
	sub.RecordedAt = storedTime(sub.RecordedAt)
	st.submissions[k] = sub
	return nil
}

// ClaimServerKey keeps the first key stored under name and returns it.
func (tx *memTx) ClaimServerKey(_ context.Context, name string, candidate []byte) ([]byte, error) {
	st := tx.current()
	if key, ok := st.serverKeys[name]; ok {
		return slices.Clone(key), nil
	}
	if len(candidate) == 0 {
		return nil, fmt.Errorf("server key %s: empty candidate", name)
	}
	st.serverKeys[name] = slices.Clone(candidate)
	return slices.Clone(candidate), nil
}
