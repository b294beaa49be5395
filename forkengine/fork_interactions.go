package forkengine

import (
	"time"
)

// A fork's child inherits the interactions of its prefix's turns (reference §6.1). Unlike
// messages they are not shared through the child's History: an interaction changes after it is
// reported (pending, then answered), and what a segment reads must never change. So prepare
// freezes them into the snapshot (a prefix holds few: one per prompt a user saw) and commit
// copies them into the child, remapped (§6.2): the owner is the child, the turn is the child's
// presented turn of the same sequence, the id is derived from the operation and the source's
// (turn, request id), and a pending one is superseded, since the child will never see it
// answered. Later changes to the source reach neither the snapshot nor the child.

// Reasons a fork fails closed on a frozen interaction it cannot map (FORK_CONFLICT).
const (
	// ReasonInteractionOutsidePrefix: a frozen interaction names a turn outside the prefix.
	ReasonInteractionOutsidePrefix = "interaction_outside_prefix"
	// ReasonInteractionDuplicate: two frozen interactions share an id or a (turn, request id),
	// or two would get the same id in the child.
	ReasonInteractionDuplicate = "interaction_duplicate"
	// ReasonInteractionUnmappable: a frozen interaction has an empty id, turn or request id.
	ReasonInteractionUnmappable = "interaction_unmappable"
)

// childInteractions remaps the snapshot's frozen interactions into the child of op, whose
// history key is key and whose inherited turns are presented by sequence, at commit time at. It
// fails closed (FORK_CONFLICT) on an empty id, a duplicate source id or (turn, request id), an
// interaction whose turn is outside the prefix (its sequence is not in 1..boundary, or it names
// another turn than its sequence's within the snapshot), and two that would collide in the child.
func childInteractions(op ForkOperation, ids *forkIDs, at time.Time) ([]Interaction, error) {
	frozen := op.Snapshot.Interactions
	if len(frozen) == 0 {
		return nil, nil
	}
	boundary, _ := op.Snapshot.through()
	turnOfSequence := map[int64]string{boundary.Sequence: boundary.ID}
	sourceIDs, requests, targets := map[string]bool{}, map[[2]string]bool{}, map[string]bool{}
	out := make([]Interaction, 0, len(frozen))
	for _, f := range frozen {
		src := f.Interaction
		fail := func(reason, format string) error {
			return ReasonErrorf(CodeForkConflict, reason, format, src.ID, src.TurnID)
		}
		switch {
		case src.ID == "" || src.TurnID == "" || src.RequestID == "":
			return nil, fail(ReasonInteractionUnmappable, "frozen interaction %q of turn %q has an empty id")
		case f.Sequence <= 0 || f.Sequence > boundary.Sequence || src.WorkspaceID != op.WorkspaceID ||
			src.SessionID != op.SourceSessionID:
			return nil, fail(ReasonInteractionOutsidePrefix, "frozen interaction %q names turn %q outside the prefix")
		case sourceIDs[src.ID] || requests[[2]string{src.TurnID, src.RequestID}]:
			return nil, fail(ReasonInteractionDuplicate, "frozen interaction %q of turn %q is there twice")
		}
		if known, ok := turnOfSequence[f.Sequence]; ok && known != src.TurnID {
			return nil, fail(ReasonInteractionOutsidePrefix, "frozen interaction %q names turn %q, not its sequence's")
		}
		turnOfSequence[f.Sequence] = src.TurnID
		sourceIDs[src.ID], requests[[2]string{src.TurnID, src.RequestID}] = true, true
		i := src.Clone()
		i.SessionID, i.TurnID = op.TargetSessionID, PresentedTurnID(ids.historyKey(), f.Sequence)
		i.ID = ids.interaction(src.TurnID, src.RequestID)
		if targets[i.ID] {
			return nil, fail(ReasonInteractionDuplicate, "frozen interaction %q of turn %q collides in the child")
		}
		targets[i.ID] = true
		if i.State == InteractionPending {
			i.State, i.UpdatedAt = InteractionSuperseded, at
		}
		out = append(out, i)
	}
	return out, nil
}
