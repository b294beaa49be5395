package access

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// MinTokenLength is the shortest static token accepted, in bytes: 16 random characters are out
// of reach of guessing at any rate limit. `openssl rand -hex 24` makes a good one.
const MinTokenLength = 16

// hashPrefix marks a token file entry that holds the SHA-256 of a token instead of the token.
const hashPrefix = "sha256:"

// tokenHash is the SHA-256 of a token: tokens are looked up, and remembered, by their hash only.
type tokenHash [sha256.Size]byte

func hashToken(token string) tokenHash { return sha256.Sum256([]byte(token)) }

// tokenEntry is one static token's grant.
type tokenEntry struct {
	name       string
	workspaces []string // sorted, distinct
	scopes     Scopes
	// revoked ends when a reload removes or changes the entry (revokable entries only: those of
	// a tokens file); its streams end with TOKEN_REVOKED.
	revoked context.Context
	revoke  context.CancelFunc
}

// sameGrant reports whether a reload left the entry's grant as it was, so it keeps its streams.
func (e *tokenEntry) sameGrant(o *tokenEntry) bool {
	return e.name == o.name && e.scopes == o.scopes && slices.Equal(e.workspaces, o.workspaces)
}

func (e *tokenEntry) principal() Principal {
	return Principal{Subject: e.name, Name: e.name, Workspaces: e.workspaces, Scopes: e.scopes,
		Source: SourceToken, revoked: e.revoked}
}

// TokenSet is a set of static API tokens (SPEC §8), each with a name, the workspaces it may use
// and its scopes, looked up by hash. A TokenSet is immutable once built; a reload builds a new
// one (TokenFile).
type TokenSet struct {
	entries map[tokenHash]*tokenEntry
	names   map[string]bool
}

func newTokenSet() *TokenSet {
	return &TokenSet{entries: map[tokenHash]*tokenEntry{}, names: map[string]bool{}}
}

// Len reports how many tokens the set holds.
func (s *TokenSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.entries)
}

// lookup finds the entry of a presented token.
func (s *TokenSet) lookup(h tokenHash) (*tokenEntry, bool) {
	if s == nil {
		return nil, false
	}
	e, ok := s.entries[h]
	return e, ok
}

// add records an entry; a token or a name already in the set is an error, as is a token already
// in other (the -tokens set beside a tokens file).
func (s *TokenSet) add(h tokenHash, e *tokenEntry, other *TokenSet) error {
	if _, dup := s.entries[h]; dup {
		return fmt.Errorf("token %s is listed twice", e.name)
	}
	if _, dup := other.lookup(h); dup {
		return fmt.Errorf("token %s is also given by -tokens", e.name)
	}
	if s.names[e.name] {
		return fmt.Errorf("two tokens are named %s", e.name)
	}
	s.entries[h], s.names[e.name] = e, true
	return nil
}

// ParseTokens reads -tokens: "tokenA=workspace1,tokenB=workspace2" (blank: none). Each token
// reaches its one workspace with every scope, as it always has, and is named "token-" and the
// first 8 hex digits of its SHA-256 (what logs and requestedBy show; never the token). A token
// shorter than MinTokenLength, a token listed twice, or a workspace that is not a valid id
// (forkengine.ValidateID: compared with the ids requests name, never trimmed) is an error that
// names the entry by position, never by its token.
func ParseTokens(spec string) (*TokenSet, error) {
	set := newTokenSet()
	for i, pair := range strings.Split(spec, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		token, ws, ok := strings.Cut(pair, "=")
		token, ws = strings.TrimSpace(token), strings.TrimSpace(ws)
		if !ok || token == "" || ws == "" {
			return nil, fmt.Errorf("token entry %d: want token=workspace", i+1)
		}
		if len(token) < MinTokenLength {
			return nil, fmt.Errorf("token entry %d: the token is %d bytes; tokens must be at least %d (e.g. `openssl rand -hex 24`)",
				i+1, len(token), MinTokenLength)
		}
		if err := forkengine.ValidateID("workspace", ws); err != nil {
			return nil, fmt.Errorf("token entry %d: %w", i+1, err)
		}
		h := hashToken(token)
		name := "token-" + hex.EncodeToString(h[:4])
		if err := set.add(h, &tokenEntry{name: name, workspaces: []string{ws}, scopes: AllScopes}, nil); err != nil {
			return nil, fmt.Errorf("token entry %d: %w", i+1, err)
		}
	}
	return set, nil
}

// ParseTokenFile reads a tokens file: one token per line, four columns separated by spaces or
// tabs; a line whose first word starts with `#` is a comment:
//
//	# name      token                    workspaces   scopes
//	frontend    sha256:<64 hex digits>   demo,lisbon  read,fork
//	ingester    <the token itself>       demo         ingest
//
// The name (an id: forkengine.ValidateID) is what logs and requestedBy show. The token is the
// value itself (at least MinTokenLength bytes) or, better, "sha256:" and the hex SHA-256 of it
// (`printf %s "$TOKEN" | sha256sum`), so the file holds no secret. Workspaces are comma-separated
// ids; scopes comma-separated names (read, fork, ingest, admin) or "all". A token or a name
// listed twice, or a token also in fixed (the -tokens set), is an error; errors name the line,
// never the token.
func ParseTokenFile(data []byte, fixed *TokenSet) (*TokenSet, error) {
	set := newTokenSet()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue // a blank line or a comment (a token may hold '#', so only whole lines are)
		}
		h, e, err := parseTokenLine(fields)
		if err == nil {
			err = set.add(h, e, fixed)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	return set, nil
}

// parseTokenLine reads the four columns of one tokens file line.
func parseTokenLine(fields []string) (tokenHash, *tokenEntry, error) {
	var h tokenHash
	if len(fields) != 4 {
		return h, nil, fmt.Errorf("want 4 columns (name, token or sha256:hash, workspaces, scopes), got %d", len(fields))
	}
	name, token, wsColumn, scopeColumn := fields[0], fields[1], fields[2], fields[3]
	if err := forkengine.ValidateID("name", name); err != nil {
		return h, nil, err
	}
	if hexHash, ok := strings.CutPrefix(token, hashPrefix); ok {
		raw, err := hex.DecodeString(hexHash)
		if err != nil || len(raw) != sha256.Size {
			return h, nil, fmt.Errorf("token %s: a sha256: entry needs 64 hex digits", name)
		}
		copy(h[:], raw)
	} else {
		if len(token) < MinTokenLength {
			return h, nil, fmt.Errorf("token %s is %d bytes; tokens must be at least %d (e.g. `openssl rand -hex 24`)",
				name, len(token), MinTokenLength)
		}
		h = hashToken(token)
	}
	workspaces, err := parseWorkspaceList(wsColumn)
	if err != nil {
		return h, nil, fmt.Errorf("token %s: %w", name, err)
	}
	scopes, err := parseScopeList(scopeColumn)
	if err != nil {
		return h, nil, fmt.Errorf("token %s: %w", name, err)
	}
	return h, &tokenEntry{name: name, workspaces: workspaces, scopes: scopes}, nil
}

// parseWorkspaceList reads comma-separated workspace ids into a sorted, distinct list.
func parseWorkspaceList(column string) ([]string, error) {
	var out []string
	for _, ws := range strings.Split(column, ",") {
		if err := forkengine.ValidateID("workspace", ws); err != nil {
			return nil, err
		}
		out = append(out, ws)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
