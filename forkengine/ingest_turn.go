package forkengine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ReportTurn upserts a turn. A new id appends a turn with the next sequence of its session; a known
// id moves it forward. The phase never goes backwards, an outcome is given exactly when the phase
// is settled, and a settled turn never changes (its first provider binding aside, see
// checkSettledUnchanged). A bound turn's provider binding never changes in any phase, and no two
// turns of a session are bound to one provider turn (checkReportedBinding). The submission, when
// given, is recorded once, as a keyed digest of its text (never the text). A report identical to
// the stored state writes nothing. Errors: BAD_USER_INPUT (ids, phase, outcome, binding,
// submission, a turn of another session; reasons turn_phase_backwards, turn_outcome_changed,
// turn_settled, provider_binding_changed, provider_turn_duplicate, submission_changed), NOT_FOUND
// (session missing or deleted).
func (e *Engine) ReportTurn(ctx context.Context, in TurnReport) (Turn, error) {
	if err := cleanTurnReport(&in); err != nil {
		return Turn{}, err
	}
	sub, err := e.submission(ctx, in)
	if err != nil {
		return Turn{}, fmt.Errorf("report turn %s: %w", in.ID, err)
	}
	out, err := e.reportTurn(ctx, in, sub)
	if errors.Is(err, ErrDuplicate) {
		// Turn ids are unique per workspace, but the session lock only keeps reports for one
		// session apart: a report for another session inserted this id after we read it as new,
		// and the store refused to move that turn. Running the report again reads it and answers
		// as if we had come second.
		out, err = e.reportTurn(ctx, in, sub)
	}
	if err != nil {
		return Turn{}, fmt.Errorf("report turn %s: %w", in.ID, err)
	}
	return out, nil
}

// reportTurn is one attempt of ReportTurn in one transaction, recording sub (the report's
// submission, digested) with the turn. ErrDuplicate when a concurrent transaction inserted the id
// in another session after this one read it.
func (e *Engine) reportTurn(ctx context.Context, in TurnReport, sub *Submission) (Turn, error) {
	var out Turn
	err := e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(in.WorkspaceID, in.SessionID)); err != nil {
			return err
		}
		if _, err := liveSession(ctx, tx, in.WorkspaceID, in.SessionID); err != nil {
			return err
		}
		stored, found, err := e.turnToReport(ctx, tx, in)
		if err != nil {
			return err
		}
		next, err := applyTurnReport(stored, in, c.at)
		if err != nil {
			return err
		}
		if err := checkReportedBinding(ctx, tx, stored, found, next); err != nil {
			return err
		}
		if found && sameTurn(stored, next) {
			out = stored
			return recordSubmission(ctx, tx, sub, c.at)
		}
		if err := tx.UpsertTurn(ctx, next); err != nil {
			return fmt.Errorf("upsert turn %s: %w", next.ID, err)
		}
		c.turn(next)
		out = next
		return recordSubmission(ctx, tx, sub, c.at)
	})
	return out, err
}

func cleanTurnReport(in *TurnReport) error {
	err := cleanIDs(idField{"workspaceId", &in.WorkspaceID}, idField{"sessionId", &in.SessionID}, idField{"id", &in.ID})
	if err != nil {
		return err
	}
	if !in.Phase.Valid() {
		return Errorf(CodeInvalid, "phase %q is not a turn phase", in.Phase)
	}
	settled := in.Phase == PhaseSettled
	switch {
	case settled && !in.Outcome.Valid():
		return Errorf(CodeInvalid, "a settled turn needs an outcome (got %q)", in.Outcome)
	case !settled && in.Outcome != "":
		return Errorf(CodeInvalid, "outcome is given only when the turn is settled")
	}
	if err := checkTexts(map[string]*string{"origin": in.Origin, "providerTurnId": in.ProviderTurnID}); err != nil {
		return err
	}
	if err := cleanOrigin(in.Origin); err != nil {
		return err
	}
	if err := cleanTurnDetails(in); err != nil {
		return err
	}
	binding, err := objectOrNil("providerTurnBinding", in.ProviderTurnBinding)
	in.ProviderTurnBinding = binding
	if err != nil {
		return err
	}
	return cleanSubmission(in.Submission)
}

// liveSession reads a session that must exist and not be soft-deleted (else NOT_FOUND).
func liveSession(ctx context.Context, r Reader, workspaceID, id string) (Session, error) {
	s, err := r.GetSession(ctx, workspaceID, id)
	if err != nil {
		return Session{}, readError(err, "session", id)
	}
	if s.Deleted() {
		return Session{}, Errorf(CodeNotFound, "session %q not found", id)
	}
	return s, nil
}

// turnToReport returns the stored turn, or a new one holding the session's next sequence.
func (e *Engine) turnToReport(ctx context.Context, tx Tx, in TurnReport) (Turn, bool, error) {
	t, err := tx.GetTurn(ctx, in.WorkspaceID, in.ID)
	switch {
	case err == nil && t.SessionID != in.SessionID:
		return Turn{}, false, Errorf(CodeInvalid, "turn %q belongs to another session", in.ID)
	case err == nil:
		return t, true, nil
	case !errors.Is(err, ErrNotFound):
		return Turn{}, false, fmt.Errorf("read turn %s: %w", in.ID, err)
	}
	latest, err := tx.LatestTurnsBySessionIDs(ctx, in.WorkspaceID, []string{in.SessionID})
	if err != nil {
		return Turn{}, false, fmt.Errorf("read latest turn of %s: %w", in.SessionID, err)
	}
	return Turn{WorkspaceID: in.WorkspaceID, SessionID: in.SessionID, ID: in.ID,
		Sequence: latest[in.SessionID].Sequence + 1}, false, nil
}

// applyTurnReport moves t forward as the report says. A new turn has a zero phase, so any phase is
// forward for it.
func applyTurnReport(t Turn, in TurnReport, now time.Time) (Turn, error) {
	if in.Phase.Rank() < t.Phase.Rank() {
		return Turn{}, ReasonErrorf(CodeInvalid, ReasonTurnPhaseBackwards,
			"turn %q cannot move from %s back to %s", t.ID, t.Phase, in.Phase)
	}
	if t.Settled() && in.Outcome != t.Outcome {
		return Turn{}, ReasonErrorf(CodeInvalid, ReasonTurnOutcomeChanged,
			"settled turn %q keeps its outcome %s", t.ID, t.Outcome)
	}
	if err := checkSettledUnchanged(t, in); err != nil {
		return Turn{}, err
	}
	if t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	if in.Phase == PhaseSettled && !t.Settled() {
		settledAt := now
		t.SettledAt = &settledAt
	}
	t.Phase, t.Outcome = in.Phase, in.Outcome
	setIfGiven(&t.Origin, in.Origin)
	setIfGiven(&t.ProviderTurnID, in.ProviderTurnID)
	applyTurnDetails(&t, in)
	if in.ProviderTurnBinding != nil {
		t.ProviderTurnBinding = in.ProviderTurnBinding
	}
	t.UpdatedAt = now
	return t, nil
}

// checkSettledUnchanged refuses a report that would change a settled turn: forks share settled
// turns instead of copying them, so one frozen before the change would show it. The first
// provider binding of a settled turn that has none may still be written (both its provider turn
// id and its binding); a fork frozen before holds its own unbound row of the turn, so it never
// sees the binding. Errors: BAD_USER_INPUT reason turn_settled.
func checkSettledUnchanged(t Turn, in TurnReport) error {
	if !t.Settled() {
		return nil
	}
	changed := func(stored string, reported *string) bool { return reported != nil && *reported != stored }
	bindingChanged := in.ProviderTurnBinding != nil && !sameJSON(t.ProviderTurnBinding, in.ProviderTurnBinding)
	firstBinding := !t.HasProviderBinding() && t.ProviderTurnID == "" && len(t.ProviderTurnBinding) == 0
	switch {
	case changed(t.Origin, in.Origin):
		return ReasonErrorf(CodeInvalid, ReasonTurnSettled, "settled turn %q keeps its origin", t.ID)
	case detailsChanged(t, in):
		return ReasonErrorf(CodeInvalid, ReasonTurnSettled, "settled turn %q keeps its error, file changes and completed command", t.ID)
	case (changed(t.ProviderTurnID, in.ProviderTurnID) || bindingChanged) && !firstBinding:
		return ReasonErrorf(CodeInvalid, ReasonTurnSettled, "settled turn %q keeps its provider binding", t.ID)
	}
	return nil
}

// checkReportedBinding applies the binding rules of ingestion to a report that moves stored
// (found says it exists) to next: a bound turn keeps its provider turn id and binding, since
// they are what a fork through it sends the provider, and only binding recovery, which writes
// an empty binding, may set one after the fact; and a provider turn id another turn of the
// session is bound to is refused, since two turns would then fork as one. The second check reads
// the store only when the provider turn id changes. Errors: BAD_USER_INPUT reason
// provider_binding_changed, provider_turn_duplicate.
func checkReportedBinding(ctx context.Context, r Reader, stored Turn, found bool, next Turn) error {
	if found && stored.HasProviderBinding() && (next.ProviderTurnID != stored.ProviderTurnID ||
		!sameJSON(next.ProviderTurnBinding, stored.ProviderTurnBinding)) {
		return ReasonErrorf(CodeInvalid, ReasonProviderBindingChanged,
			"turn %q is bound to a provider turn; its provider turn id and binding do not change", stored.ID)
	}
	if found && next.ProviderTurnID == stored.ProviderTurnID {
		return nil
	}
	return checkProviderTurnFree(ctx, r, next)
}

// checkProviderTurnFree refuses t's provider turn id when another turn of its session is bound to
// it. Errors: BAD_USER_INPUT reason provider_turn_duplicate.
func checkProviderTurnFree(ctx context.Context, r Reader, t Turn) error {
	if t.ProviderTurnID == "" || t.ProviderTurnID == t.ID {
		return nil
	}
	owner, err := r.ProviderTurnOwner(ctx, t.WorkspaceID, t.SessionID, t.ProviderTurnID, t.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("read the owner of provider turn %s: %w", t.ProviderTurnID, err)
	}
	return ReasonErrorf(CodeInvalid, ReasonProviderTurnDuplicate,
		"provider turn %q is bound to turn %q of session %q", t.ProviderTurnID, owner.ID, t.SessionID)
}

// sameTurn compares everything a report can change.
func sameTurn(a, b Turn) bool {
	return a.Phase == b.Phase && a.Outcome == b.Outcome && a.Origin == b.Origin &&
		a.ProviderTurnID == b.ProviderTurnID && sameJSON(a.ProviderTurnBinding, b.ProviderTurnBinding) &&
		sameTurnDetails(a, b)
}

// detailsChanged reports whether in would change t's error, file changes or completed command.
func detailsChanged(t Turn, in TurnReport) bool {
	next := t
	applyTurnDetails(&next, in)
	return !sameTurnDetails(t, next)
}
