package resolvers_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTableDigestIsReadAgainAfterEveryCommit: on SQLite tableDigest returns its last digest
// unread while no other connection has committed (PRAGMA data_version), and reads every table
// again after any commit, so a refusal that wrote would still show.
func TestTableDigestIsReadAgainAfterEveryCommit(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t, apiOptions{})
	first := api.tableDigest()
	require.Equal(t, first, api.tableDigest(), "nothing was written")
	require.Equal(t, 1, api.raw.read, "the tables were read once")
	require.Equal(t, 1, api.raw.reused, "the second digest was the first, unread")

	api.reportTitle("w", "s1", "one")
	second := api.tableDigest()
	require.NotEqual(t, first, second, "a committed write changes the digest")
	require.Equal(t, 2, api.raw.read, "a commit makes the tables be read again")

	require.Equal(t, second, api.tableDigest(), "nothing was written since")
	require.Equal(t, 2, api.raw.read, "and the tables were not read again")
}
