package forkengine

import (
	"encoding/json"
	"testing"
	"time"
)

// The remap of a fork's interactions (reference §6.2): one test per fail-closed case, named
// given / when / then, and the mapping itself.
func TestChildInteractions(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	boundary := Turn{WorkspaceID: "ws", SessionID: "src", ID: "src-t2", Sequence: 2}
	frozen := func(seq int64, turn, request string) FrozenInteraction {
		return FrozenInteraction{Sequence: seq, Interaction: Interaction{WorkspaceID: "ws", SessionID: "src", TurnID: turn,
			ID: "i-" + turn + "-" + request, RequestID: request, Kind: InteractionQuestion, Prompt: json.RawMessage(`{}`),
			State: InteractionPending, CreatedAt: at, UpdatedAt: at}}
	}
	op := func(is ...FrozenInteraction) ForkOperation {
		return ForkOperation{WorkspaceID: "ws", ID: "op-1", SourceSessionID: "src", TargetSessionID: "dst",
			ThroughTurnID: boundary.ID, Snapshot: Snapshot{Version: snapshotVersion, Boundary: &boundary, Interactions: is}}
	}
	fails := map[string]struct {
		op     ForkOperation
		reason string
	}{
		"GivenAnInteractionOfATurnAfterTheBoundary_WhenRemapped_ThenInteractionOutsidePrefix": {
			op(frozen(3, "src-t3", "r")), ReasonInteractionOutsidePrefix},
		"GivenAnInteractionOfAnotherSession_WhenRemapped_ThenInteractionOutsidePrefix": {
			op(func() FrozenInteraction { f := frozen(1, "src-t1", "r"); f.Interaction.SessionID = "other"; return f }()),
			ReasonInteractionOutsidePrefix},
		"GivenAnInteractionNamingAnotherTurnThanTheBoundarysSequence_WhenRemapped_ThenInteractionOutsidePrefix": {
			op(frozen(2, "src-t9", "r")), ReasonInteractionOutsidePrefix},
		"GivenTwoTurnIDsAtOneSequence_WhenRemapped_ThenInteractionOutsidePrefix": {
			op(frozen(1, "src-t1", "r"), frozen(1, "src-tx", "s")), ReasonInteractionOutsidePrefix},
		"GivenADuplicateRequestOfATurn_WhenRemapped_ThenInteractionDuplicate": {
			op(frozen(1, "src-t1", "r"), func() FrozenInteraction { f := frozen(1, "src-t1", "r"); f.Interaction.ID = "other"; return f }()),
			ReasonInteractionDuplicate},
		"GivenADuplicateSourceID_WhenRemapped_ThenInteractionDuplicate": {
			op(frozen(1, "src-t1", "r"), func() FrozenInteraction { f := frozen(1, "src-t1", "s"); f.Interaction.ID = "i-src-t1-r"; return f }()),
			ReasonInteractionDuplicate},
		"GivenAnEmptyRequestID_WhenRemapped_ThenInteractionUnmappable": {
			op(frozen(1, "src-t1", "")), ReasonInteractionUnmappable},
		"GivenAnEmptyTurnID_WhenRemapped_ThenInteractionUnmappable": {
			op(frozen(1, "", "r")), ReasonInteractionUnmappable},
	}
	for name, c := range fails {
		t.Run(name, func(t *testing.T) {
			got, err := childInteractions(c.op, newForkIDs(c.op), at)
			if ErrorCode(err) != CodeForkConflict || ErrorReason(err) != c.reason || got != nil {
				t.Fatalf("got %v, %v; want FORK_CONFLICT %s and nothing", got, err, c.reason)
			}
		})
	}
	t.Run("GivenPrefixInteractions_WhenRemapped_ThenOwnedByTheChildUnderPresentedTurnsAndPendingSuperseded", func(t *testing.T) {
		answered := frozen(2, "src-t2", "b")
		answered.Interaction.State, answered.Interaction.Answer = InteractionAnswered, json.RawMessage(`"yes"`)
		o := op(frozen(1, "src-t1", "a"), answered)
		ids := newForkIDs(o)
		got, err := childInteractions(o, ids, at.Add(time.Hour))
		if err != nil || len(got) != 2 {
			t.Fatalf("got %v, %v", got, err)
		}
		if got[0].TurnID != PresentedTurnID(ids.historyKey(), 1) || got[0].SessionID != "dst" ||
			got[0].State != InteractionSuperseded || !got[0].UpdatedAt.Equal(at.Add(time.Hour)) {
			t.Fatalf("pending one: %+v", got[0])
		}
		if got[1].TurnID != PresentedTurnID(ids.historyKey(), 2) || got[1].State != InteractionAnswered || got[1].RequestID != "b" {
			t.Fatalf("answered one: %+v", got[1])
		}
		again, _ := childInteractions(o, newForkIDs(o), at)
		if again[0].ID != got[0].ID || again[1].ID != got[1].ID || got[0].ID == got[1].ID {
			t.Fatalf("ids are not deterministic per operation: %s %s / %s %s", got[0].ID, got[1].ID, again[0].ID, again[1].ID)
		}
		other := o
		other.ID = "op-2"
		if moved, _ := childInteractions(other, newForkIDs(other), at); moved[0].ID == got[0].ID {
			t.Fatalf("another operation derived the same id %s", got[0].ID)
		}
	})
}
