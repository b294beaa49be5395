package store

import "testing"

// eachRowOfWorkspace fills the first scan target with the workspace instead of selecting it: for
// every row type it reads, that target must be the row's WorkspaceID, and the column lists must
// start with workspace_id (columnsAfterWorkspace panics otherwise, at package init).
func TestScanTargetsStartWithWorkspace(t *testing.T) {
	var s sessionRow
	var tr turnRow
	var m messageRow
	var l lineageRow
	for name, c := range map[string]struct {
		first any
		ws    *string
	}{
		"sessions": {s.targets()[0], &s.WorkspaceID}, "turns": {tr.targets()[0], &tr.WorkspaceID},
		"messages": {m.targets()[0], &m.WorkspaceID}, "lineages": {l.targets()[0], &l.WorkspaceID},
	} {
		if p, ok := c.first.(*string); !ok || p != c.ws {
			t.Errorf("%s: the first scan target is not WorkspaceID", name)
		}
	}
}
