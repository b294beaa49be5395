package access

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

// testAuthenticator authenticates the -tokens spec (token=workspace, ...).
func testAuthenticator(t *testing.T, spec string) *Authenticator {
	t.Helper()
	set, err := ParseTokens(spec)
	require.NoError(t, err)
	return NewAuthenticator(AuthConfig{Tokens: set})
}

// testTokenName is the name ParseTokens gives a token.
func testTokenName(token string) string {
	h := hashToken(token)
	return "token-" + hex.EncodeToString(h[:4])
}
