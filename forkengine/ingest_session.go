package forkengine

import (
	"context"
	"errors"
	"fmt"
	"time"
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
	if err := checkTexts(map[string]*string{"provider": &in.Provider, "providerSessionId": in.ProviderSessionID,
		"title": in.Title, "railSectionKey": in.RailSectionKey, "cwd": in.Cwd, "model": in.Model}); err != nil {
		return err
	}
	if in.Kind == "" {
		in.Kind = SessionRoot
	}
	if !in.Kind.Valid() {
		return Errorf(CodeInvalid, "kind %q is not a session kind", in.Kind)
	}
	settings, err := objectOrNil("settings", in.Settings)
	in.Settings = settings
	if err != nil {
		return err
	}
	in.Metadata, err = objectOrNil("metadata", in.Metadata)
	return err
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

func applySessionReport(s Session, found bool, in SessionReport, now time.Time) Session {
	if !found {
		s = Session{WorkspaceID: in.WorkspaceID, ID: in.ID, Visible: true, CreatedAt: now}
	}
	s.Kind, s.Provider, s.DeletedAt = in.Kind, in.Provider, nil
	setIfGiven(&s.ProviderSessionID, in.ProviderSessionID)
	setIfGiven(&s.Title, in.Title)
	setIfGiven(&s.RailSectionKey, in.RailSectionKey)
	setIfGiven(&s.Cwd, in.Cwd)
	setIfGiven(&s.Model, in.Model)
	if in.Visible != nil {
		s.Visible = *in.Visible
	}
	if in.Settings != nil {
		s.Settings = in.Settings
	}
	if in.Metadata != nil {
		s.Metadata = in.Metadata
	}
	if s.Settings == nil {
		s.Settings = []byte("{}")
	}
	s.UpdatedAt = now
	return s
}

func setIfGiven[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// sameSession compares everything a report can change; timestamps are not reported.
func sameSession(a, b Session) bool {
	return a.Kind == b.Kind && a.Provider == b.Provider && a.ProviderSessionID == b.ProviderSessionID &&
		a.Title == b.Title && a.RailSectionKey == b.RailSectionKey && a.Cwd == b.Cwd &&
		a.Model == b.Model && a.Visible == b.Visible && sameJSON(a.Settings, b.Settings) && sameJSON(a.Metadata, b.Metadata) &&
		a.Deleted() == b.Deleted()
}
