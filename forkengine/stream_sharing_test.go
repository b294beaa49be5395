package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

func TestWorkspacePositionShareable(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		from forkengine.WorkspacePosition
		want bool
	}{
		"live only":                  {forkengine.WorkspacePosition{}, true},
		"resumed from the log start": {forkengine.WorkspacePosition{Resume: true}, false},
		"resumed after a cursor":     {forkengine.WorkspacePosition{Cursor: 7, Resume: true}, false},
	} {
		require.Equal(t, tc.want, tc.from.Shareable(), name)
	}
}
