package models

import "github.com/forkgraph/forkgraph/forkengine"

// ForkVerificationFrom maps the engine's resume check to its API view.
func ForkVerificationFrom(v forkengine.ForkVerification, rel Relations) *ForkVerification {
	out := &ForkVerification{Status: wire[ForkVerificationStatus](v.Status), Reason: optional(v.Reason),
		Resumable: v.Resumable(), Session: SessionFrom(v.Session, rel)}
	if v.Lineage != nil {
		out.Lineage = LineageFrom(*v.Lineage, rel)
	}
	if v.Operation != nil {
		out.ForkOperation = ForkOperationFrom(*v.Operation)
	}
	return out
}

// WorkspaceSettingsFrom maps the engine's forking state of a workspace to its API view.
func WorkspaceSettingsFrom(workspaceID string, s forkengine.ForkingState) *WorkspaceSettings {
	out := &WorkspaceSettings{WorkspaceID: workspaceID, ForkingEnabled: s.Enabled(),
		WorkspaceForkingEnabled: !s.Workspace.ForkingDisabled, ServerForkingEnabled: !s.ServerDisabled}
	if !s.Workspace.UpdatedAt.IsZero() {
		at := s.Workspace.UpdatedAt
		out.UpdatedAt = &at
	}
	return out
}
