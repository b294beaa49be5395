package forkengine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The kill switch (reference §8, "Feature flag"): an operator stops new forks, for the whole
// server (Config.ForkingDisabled) or for one workspace (SetWorkspaceForking, kept in the store so
// every instance on one database sees it at once), while everything else goes on: reads,
// acknowledgements, reconciliation, abandonment, and the forks already started, which run to
// their end. While forking is off, lifecycleCapabilities and providerForkBindingAvailable are
// false without asking any driver, so no client offers a fork that would be refused.

// WorkspaceSettings is what an operator set for one workspace. The zero value (no row) is the
// default: forking on.
type WorkspaceSettings struct {
	WorkspaceID     string
	ForkingDisabled bool
	UpdatedAt       time.Time // zero when never set
}

// ForkingState says whether new forks may start in a workspace, and which switch says not.
type ForkingState struct {
	Workspace      WorkspaceSettings
	ServerDisabled bool // Config.ForkingDisabled
}

// Enabled reports whether new forks may start: neither switch is off.
func (s ForkingState) Enabled() bool { return !s.ServerDisabled && !s.Workspace.ForkingDisabled }

// Forking returns the forking state of a workspace. Errors: BAD_USER_INPUT (the id).
func (e *Engine) Forking(ctx context.Context, workspaceID string) (ForkingState, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}); err != nil {
		return ForkingState{}, err
	}
	settings, err := e.workspaceSettings(ctx, e.store, workspaceID)
	if err != nil {
		return ForkingState{}, err
	}
	return ForkingState{Workspace: settings, ServerDisabled: e.cfg.ForkingDisabled}, nil
}

// SetWorkspaceForking switches new forks of a workspace on or off and returns its state. Setting
// what is set already writes nothing. It changes no operation: forks already started finish.
// Errors: BAD_USER_INPUT (the id).
func (e *Engine) SetWorkspaceForking(ctx context.Context, workspaceID string, enabled bool) (ForkingState, error) {
	if err := cleanIDs(idField{"workspaceId", &workspaceID}); err != nil {
		return ForkingState{}, err
	}
	var out WorkspaceSettings
	err := e.update(ctx, func(tx Tx, c *changes) error {
		if err := tx.Lock(ctx, workspaceSettingsLock(workspaceID)); err != nil {
			return err
		}
		stored, err := e.workspaceSettings(ctx, tx, workspaceID)
		if err != nil {
			return err
		}
		out = stored
		if stored.ForkingDisabled == !enabled {
			return nil // as it is (a workspace never set is on)
		}
		out = WorkspaceSettings{WorkspaceID: workspaceID, ForkingDisabled: !enabled, UpdatedAt: c.at}
		return tx.UpsertWorkspaceSettings(ctx, out)
	})
	if err != nil {
		return ForkingState{}, fmt.Errorf("set forking of workspace %s: %w", workspaceID, err)
	}
	return ForkingState{Workspace: out, ServerDisabled: e.cfg.ForkingDisabled}, nil
}

func workspaceSettingsLock(workspaceID string) string { return "workspace-settings/" + workspaceID }

// workspaceSettings reads one workspace's settings, the defaults when it has none.
func (e *Engine) workspaceSettings(ctx context.Context, r Reader, workspaceID string) (WorkspaceSettings, error) {
	all, err := r.WorkspaceSettingsByIDs(ctx, []string{workspaceID})
	if err != nil {
		return WorkspaceSettings{}, fmt.Errorf("read the settings of workspace %s: %w", workspaceID, err)
	}
	if s, ok := all[workspaceID]; ok {
		return s, nil
	}
	return WorkspaceSettings{WorkspaceID: workspaceID}, nil
}

// errForkingDisabled is the refusal of a new fork while a switch is off. FORK_UNSUPPORTED, like a
// provider that cannot fork: a client that retries gets it again until an operator switches
// forking back on.
var errForkingDisabled = ReasonErrorf(CodeForkUnsupported, ReasonForkingDisabled,
	"forking is switched off for this workspace; forks already started go on")

// checkForking refuses a new fork while forking is off for the workspace or the server.
func (e *Engine) checkForking(ctx context.Context, workspaceID string) error {
	if e.cfg.ForkingDisabled {
		return errForkingDisabled
	}
	settings, err := e.workspaceSettings(ctx, e.store, workspaceID)
	switch {
	case err != nil:
		return err
	case settings.ForkingDisabled:
		return errForkingDisabled
	}
	return nil
}

// forkingOff reports, for each of workspaces, whether forking is off there: one read for all of
// them, none when the server switch is off. A read that fails answers "off" for every one (the
// projections it serves fail closed) and is returned for the log.
func (e *Engine) forkingOff(ctx context.Context, workspaces map[string]bool) (map[string]bool, error) {
	off := make(map[string]bool, len(workspaces))
	if len(workspaces) == 0 {
		return off, nil
	}
	if e.cfg.ForkingDisabled {
		for ws := range workspaces {
			off[ws] = true
		}
		return off, nil
	}
	ids := make([]string, 0, len(workspaces))
	for ws := range workspaces {
		ids = append(ids, ws)
	}
	settings, err := e.store.WorkspaceSettingsByIDs(ctx, ids)
	if err != nil {
		for ws := range workspaces {
			off[ws] = true
		}
		return off, errors.Join(errors.New("read workspace settings"), err)
	}
	for ws := range workspaces {
		off[ws] = settings[ws].ForkingDisabled
	}
	return off, nil
}
