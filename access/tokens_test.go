package access_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/access"
)

const (
	tokFront  = "front-0123456789abcdef"
	tokIngest = "ingest-0123456789abcdef"
	tokAdmin  = "admin-0123456789abcdef"
)

func sha(token string) string {
	h := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(h[:])
}

// identify authenticates authorization as the HTTP edge does and returns the principal.
func identify(t *testing.T, a *access.Authenticator, authorization string) (access.Principal, error) {
	t.Helper()
	p, err := a.Authenticate(context.Background(), authorization)
	return p, err
}

func TestParseTokensKeepsItsMeaning(t *testing.T) {
	t.Parallel()
	none, err := access.ParseTokens(" ")
	require.NoError(t, err)
	require.Zero(t, none.Len())
	set, err := access.ParseTokens(" aaaaaaaaaaaaaaaa=w1, bbbbbbbbbbbbbbbb = w2 ")
	require.NoError(t, err)
	require.Equal(t, 2, set.Len())
	a := access.NewAuthenticator(access.AuthConfig{Tokens: set})
	p, err := identify(t, a, "Bearer aaaaaaaaaaaaaaaa")
	require.NoError(t, err)
	require.Equal(t, access.AllScopes, p.Scopes, "-tokens a=ws keeps meaning every scope")
	require.Equal(t, []string{"w1"}, p.Workspaces)
	require.Regexp(t, `^token-[0-9a-f]{8}$`, p.Subject, "named by its hash, never by itself")
	require.NotContains(t, p.Subject, "aaaa")

	for name, spec := range map[string]string{
		"no workspace":       "just-a-token-0123456789",
		"empty workspace":    "aaaaaaaaaaaaaaaa=",
		"empty token":        "=w",
		"invalid workspace":  "aaaaaaaaaaaaaaaa=w\x00x",
		"short token":        "tokA=w1",
		"a token twice":      "aaaaaaaaaaaaaaaa=ws1,aaaaaaaaaaaaaaaa=ws2",
		"a token twice, too": "aaaaaaaaaaaaaaaa=ws1, aaaaaaaaaaaaaaaa=ws1",
	} {
		t.Run("refused: "+name, func(t *testing.T) {
			_, err := access.ParseTokens(spec)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "aaaaaaaaaaaaaaaa", "errors never show a token")
		})
	}
}

func TestParseTokenFile(t *testing.T) {
	t.Parallel()
	file := "# name token workspaces scopes\n" +
		"front  " + sha(tokFront) + "  demo,lisbon,demo  read,fork\n" +
		"\n" +
		"ingest\t" + tokIngest + "\tdemo\tingest\n" +
		"admin sha256:" + strings.ToUpper(sha(tokAdmin)[7:]) + " demo all\n"
	set, err := access.ParseTokenFile([]byte(file), nil)
	require.NoError(t, err)
	require.Equal(t, 3, set.Len())

	f := writeTokenFile(t, file)
	tf, err := access.LoadTokenFile(f, nil, nil)
	require.NoError(t, err)
	a := access.NewAuthenticator(access.AuthConfig{TokenFile: tf})
	p, err := identify(t, a, "Bearer "+tokFront)
	require.NoError(t, err)
	require.Equal(t, "front", p.Subject)
	require.Equal(t, []string{"demo", "lisbon"}, p.Workspaces)
	require.Equal(t, access.ScopesOf(access.ScopeRead, access.ScopeFork), p.Scopes)
	p, err = identify(t, a, "bearer "+tokAdmin)
	require.NoError(t, err)
	require.Equal(t, access.AllScopes, p.Scopes)

	fixed, err := access.ParseTokens(tokIngest + "=other")
	require.NoError(t, err)
	for name, text := range map[string]string{
		"three columns":          "front " + tokFront + " demo\n",
		"a short token":          "front tooshort demo read\n",
		"a bad hash":             "front sha256:abcd demo read\n",
		"an unknown scope":       "front " + tokFront + " demo read,write\n",
		"a bad workspace":        "front " + tokFront + " demo,,x read\n",
		"a bad name":             "fr\x01nt " + tokFront + " demo read\n",
		"a token twice":          "a " + tokFront + " demo read\nb " + tokFront + " demo fork\n",
		"a token and its hash":   "a " + tokFront + " demo read\nb " + sha(tokFront) + " demo fork\n",
		"a name twice":           "a " + tokFront + " demo read\na " + tokAdmin + " demo fork\n",
		"a token also in -token": "i " + tokIngest + " demo read\n",
	} {
		t.Run("refused: "+name, func(t *testing.T) {
			_, err := access.ParseTokenFile([]byte(text), fixed)
			require.Error(t, err)
			require.Contains(t, err.Error(), "line ")
			for _, secret := range []string{tokFront, tokIngest, tokAdmin} {
				require.NotContains(t, err.Error(), secret)
			}
		})
	}
}

func writeTokenFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// replaceFile writes text beside path and renames it over path, as configuration tools do.
func replaceFile(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(text), 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// A reload swaps the set at once: a removed token, or one whose grant changed, is refused and
// its streams end (TOKEN_REVOKED); an unchanged one keeps working, its streams untouched; a bad
// file keeps the set in force and says why.
func TestTokenFileReload(t *testing.T) {
	t.Parallel()
	path := writeTokenFile(t, "front "+tokFront+" demo read\ningest "+tokIngest+" demo ingest\nadmin "+sha(tokAdmin)+" demo all\n")
	var mu sync.Mutex
	var reloads []access.TokenReload
	tf, err := access.LoadTokenFile(path, nil, func(r access.TokenReload) {
		mu.Lock()
		defer mu.Unlock()
		reloads = append(reloads, r)
	})
	require.NoError(t, err)
	a := access.NewAuthenticator(access.AuthConfig{TokenFile: tf})
	front, err := identify(t, a, "Bearer "+tokFront)
	require.NoError(t, err)
	ingest, err := identify(t, a, "Bearer "+tokIngest)
	require.NoError(t, err)
	admin, err := identify(t, a, "Bearer "+tokAdmin)
	require.NoError(t, err)
	frontLife, releaseFront := front.Lifetime()
	defer releaseFront()
	ingestLife, releaseIngest := ingest.Lifetime()
	defer releaseIngest()
	adminLife, releaseAdmin := admin.Lifetime()
	defer releaseAdmin()

	// front removed, ingest's scopes changed, admin unchanged.
	replaceFile(t, path, "ingest "+tokIngest+" demo ingest,read\nadmin "+sha(tokAdmin)+" demo all\n")
	require.NoError(t, tf.Reload())
	_, err = identify(t, a, "Bearer "+tokFront)
	require.Equal(t, access.ReasonUnknownToken, reasonOf(t, err))
	p, err := identify(t, a, "Bearer "+tokIngest)
	require.NoError(t, err)
	require.True(t, p.Scopes.Has(access.ScopeRead))
	for name, life := range map[string]context.Context{"removed": frontLife, "changed": ingestLife} {
		select {
		case <-life.Done():
			require.Equal(t, "TOKEN_REVOKED", codeOf(context.Cause(life)), name)
		case <-time.After(5 * time.Second):
			t.Fatalf("the %s token's stream did not end", name)
		}
	}
	require.NoError(t, adminLife.Err(), "an unchanged token keeps its streams")
	err = front.Authorize(time.Now(), "demo", access.ScopeRead)
	require.Equal(t, access.ReasonTokenRevoked, reasonOf(t, err), "a connection authenticated before the reload is refused too")
	require.NoError(t, admin.Authorize(time.Now(), "demo", access.ScopeAdmin))

	replaceFile(t, path, "admin "+sha(tokAdmin)+" demo all\nbroken line\n")
	err = tf.Reload()
	require.Error(t, err)
	_, err = identify(t, a, "Bearer "+tokIngest)
	require.NoError(t, err, "a bad file keeps the set in force")
	mu.Lock()
	require.Len(t, reloads, 2)
	require.Equal(t, []string{"front", "ingest"}, sorted(reloads[0].Revoked))
	require.Error(t, reloads[1].Err)
	require.Equal(t, 2, reloads[1].Tokens)
	mu.Unlock()
	require.NoError(t, adminLife.Err())
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func codeOf(err error) string {
	var e *access.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Watch notices a change to the file by itself, edits in place and renames alike.
func TestTokenFileWatch(t *testing.T) {
	t.Parallel()
	path := writeTokenFile(t, "front "+tokFront+" demo read\n")
	reloaded := make(chan access.TokenReload, 10)
	tf, err := access.LoadTokenFile(path, nil, func(r access.TokenReload) { reloaded <- r })
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tf.Watch(ctx, 20*time.Millisecond)
	a := access.NewAuthenticator(access.AuthConfig{TokenFile: tf})

	replaceFile(t, path, "front "+tokFront+" demo read\nadmin "+tokAdmin+" demo admin\n")
	r := awaitReload(t, reloaded)
	require.NoError(t, r.Err)
	require.Equal(t, 2, r.Tokens)
	_, err = identify(t, a, "Bearer "+tokAdmin)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(path, []byte("front "+tokFront+" demo read\n"), 0o600)) // in place
	r = awaitReload(t, reloaded)
	require.Equal(t, []string{"admin"}, r.Revoked)

	require.NoError(t, os.WriteFile(path, []byte("nonsense\n"), 0o600))
	r = awaitReload(t, reloaded)
	require.Error(t, r.Err)
	select {
	case again := <-reloaded:
		t.Fatalf("a bad file is reported once, not at every poll: %+v", again)
	case <-time.After(100 * time.Millisecond):
	}
	_, err = identify(t, a, "Bearer "+tokFront)
	require.NoError(t, err)
}

func awaitReload(t *testing.T, ch <-chan access.TokenReload) access.TokenReload {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the tokens file was not reloaded")
		return access.TokenReload{}
	}
}

func TestLoadTokenFileRefusesABadFile(t *testing.T) {
	t.Parallel()
	_, err := access.LoadTokenFile(filepath.Join(t.TempDir(), "missing"), nil, nil)
	require.Error(t, err)
	_, err = access.LoadTokenFile(writeTokenFile(t, "a "+tokFront+" demo read\nb "+tokFront+" demo read\n"), nil, nil)
	require.ErrorContains(t, err, "line 2")
}
