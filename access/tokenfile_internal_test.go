package access

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAnInPlaceWriteIsReadWhole: a tokens file written in place is truncated and then written,
// and a poll between the two saw an empty file, a set of no tokens: applying it revoked every
// token of the file (ending their streams) one poll before the whole file brought them back.
// Watch's polls (reloadIfChanged, called here one by one) read a change only once it has stayed
// the same for a poll: the empty file is never applied, the whole one is, and nothing is
// revoked. A change that stays is read at the next poll, and a file emptied on purpose is
// applied.
func TestAnInPlaceWriteIsReadWhole(t *testing.T) {
	t.Parallel()
	const front, admin = "front-0123456789abcdef", "admin-0123456789abcdef"
	both := "front " + front + " demo read\nadmin " + admin + " demo admin\n"
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte(both), 0o600))
	var reloads []TokenReload
	f, err := LoadTokenFile(path, nil, func(r TokenReload) { reloads = append(reloads, r) })
	require.NoError(t, err)

	require.NoError(t, os.Truncate(path, 0)) // the in-place write has truncated the file
	f.reloadIfChanged()
	require.Empty(t, reloads, "an empty file seen once is not applied")
	require.Equal(t, 2, f.current.Load().Len())
	require.NoError(t, os.WriteFile(path, []byte(both+"# and a comment\n"), 0o600)) // and written it
	f.reloadIfChanged()
	require.Empty(t, reloads, "the file changed again since the last poll")
	f.reloadIfChanged()
	require.Equal(t, []TokenReload{{Tokens: 2}}, reloads, "read whole, once it stayed the same: nothing revoked")
	f.reloadIfChanged()
	require.Len(t, reloads, 1, "an unchanged file is not read again")

	require.NoError(t, os.WriteFile(path, nil, 0o600)) // emptied on purpose
	f.reloadIfChanged()
	f.reloadIfChanged()
	require.Len(t, reloads, 2)
	require.ElementsMatch(t, []string{"front", "admin"}, reloads[1].Revoked)
	require.Zero(t, f.current.Load().Len())
}
