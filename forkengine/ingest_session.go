package forkengine

import (
	"context"
	"errors"
	"fmt"
)

// ReportSession upserts a session as an agent runtime sees it. Nil pointer fields keep the stored
// value (a new session gets empty strings, visible=true and settings {}). Reporting a soft-deleted
// session restores it. A report identical to the stored state writes nothing and emits no event.
// A provider session belongs to the first workspace that reports it (or that a fork made it for):
// reporting one another workspace owns is refused. A session's provider session id (and its
// provider) never change once it has one. Errors: BAD_USER_INPUT (ids, provider, kind, settings;
// reason invalid_text or invalid_id for text no store could keep, provider_session_changed),
// FORBIDDEN reason provider_session_owned, CONFLICT reason target_reserved (the id is reserved as
// the target of a fork that has not committed).
func (e *Engine) ReportSession(ctx context.Context, in SessionReport) (Session, error) {
	if err := cleanSessionReport(&in); err != nil {
		return Session{}, err
	}
	var out Session
	err := e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, sessionLock(in.WorkspaceID, in.ID)); err != nil {
			return err
		}
		if err := checkNotReserved(ctx, tx, in.WorkspaceID, in.ID); err != nil {
			return err
		}
		stored, found, err := findSession(ctx, tx, in.WorkspaceID, in.ID)
		if err != nil {
			return err
		}
		next := applySessionReport(stored, found, in, c.at)
		if err := checkProviderSessionKept(stored, found, next); err != nil {
			return err
		}
		if v, ok := e.cfg.Drivers[next.Provider].(SessionValidator); ok {
			if err := v.ValidateSession(next); err != nil {
				return err
			}
		}
		if found && sameSession(stored, next) {
			out = stored
			return nil
		}
		if err := claimReported(ctx, tx, stored, found, next, c.at); err != nil {
			return err
		}
		if err := tx.UpsertSession(ctx, next); err != nil {
			return fmt.Errorf("upsert session %s: %w", next.ID, err)
		}
		c.session(EventSessionUpserted, next)
		out = next
		return nil
	})
	if err != nil {
		return Session{}, fmt.Errorf("report session %s: %w", in.ID, err)
	}
	return out, nil
}

func cleanSessionReport(in *SessionReport) error {
	if err := cleanIDs(idField{"workspaceId", &in.WorkspaceID}, idField{"id", &in.ID}); err != nil {
		return err
	}
	if in.Provider == "" {
		return ReasonErrorf(CodeInvalid, ReasonInvalidID, "provider is required")
	}
	if err := checkReportedTexts(in); err != nil {
		return err
	}
	if in.Kind == "" {
		in.Kind = SessionRoot
	}
	if !in.Kind.Valid() {
		return Errorf(CodeInvalid, "kind %q is not a session kind", in.Kind)
	}
	return checkReportedObjects(in)
}

// checkNotReserved refuses an id that a fork operation holds for a target it has not created yet.
// Once the operation commits, the target session exists and may be reported like any other.
func checkNotReserved(ctx context.Context, r Reader, workspaceID, id string) error {
	op, held, err := reservation(ctx, r, workspaceID, id)
	if err != nil || !held || op.Status == StatusCommitted {
		return err
	}
	return ReasonErrorf(CodeForkConflict, ReasonTargetReserved,
		"session id %q is reserved by fork operation %s", id, op.ID)
}

// findSession reads a session, reporting a miss as found=false rather than an error.
func findSession(ctx context.Context, r Reader, workspaceID, id string) (Session, bool, error) {
	s, err := r.GetSession(ctx, workspaceID, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return Session{}, false, nil
	case err != nil:
		return Session{}, false, fmt.Errorf("read session %s: %w", id, err)
	}
	return s, true, nil
}

// checkProviderSessionKept refuses a report that would point a session at another provider
// session once it has one (another provider session id, or another provider for the same id):
// forks of it, the lineage of its forks and every resume check name that provider session.
// Errors: BAD_USER_INPUT reason provider_session_changed.
func checkProviderSessionKept(stored Session, found bool, next Session) error {
	if !found || stored.ProviderSessionID == "" {
		return nil
	}
	if next.ProviderSessionID != stored.ProviderSessionID || next.Provider != stored.Provider {
		return ReasonErrorf(CodeInvalid, ReasonProviderSessionChanged,
			"session %q keeps its provider session %q of provider %q", stored.ID, stored.ProviderSessionID, stored.Provider)
	}
	return nil
}

func setIfGiven[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
