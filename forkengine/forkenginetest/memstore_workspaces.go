package forkenginetest

import (
	"context"

	"github.com/forkgraph/forkgraph/forkengine"
)

// WorkspaceSettingsByIDs returns the stored settings among workspaceIDs.
func (v memView) WorkspaceSettingsByIDs(_ context.Context, workspaceIDs []string) (map[string]forkengine.WorkspaceSettings, error) {
	st := v.load()
	out := map[string]forkengine.WorkspaceSettings{}
	for _, ws := range workspaceIDs {
		if s, ok := st.workspaces[ws]; ok {
			out[ws] = s
		}
	}
	return out, nil
}

// UpsertWorkspaceSettings stores a workspace's settings.
func (tx *memTx) UpsertWorkspaceSettings(_ context.Context, s forkengine.WorkspaceSettings) error {
	s.UpdatedAt = storedTime(s.UpdatedAt)
	tx.current().workspaces[s.WorkspaceID] = s
	return nil
}
