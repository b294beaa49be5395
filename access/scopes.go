package access

import (
	"fmt"
	"strings"
)

// Scope is one right a credential grants (SPEC §8). Credentials spell scopes in lower case, as
// here; the schema's Scope enum names the same four in upper case.
type Scope string

// The four scopes. Each root field of the schema needs exactly one of them (its @requiresScope).
const (
	ScopeRead   Scope = "read"   // every query and subscription
	ScopeFork   Scope = "fork"   // forkSession, acknowledge, reconcile, abandon
	ScopeIngest Scope = "ingest" // reportSession, reportTurn, appendMessages
	ScopeAdmin  Scope = "admin"  // deleteSession, with or without purge
)

// allScopes lists every scope in the order they are shown.
var allScopes = []Scope{ScopeRead, ScopeFork, ScopeIngest, ScopeAdmin}

// ParseScope reads one scope name (lower case, as credentials spell it). ok is false for any
// other word.
func ParseScope(name string) (Scope, bool) {
	for _, s := range allScopes {
		if string(s) == name {
			return s, true
		}
	}
	return "", false
}

// Scopes is a set of scopes.
type Scopes uint8

// AllScopes grants every scope: what a `-tokens a=ws` token and open mode have.
const AllScopes Scopes = 1<<4 - 1 // one bit per entry of allScopes

func (s Scope) bit() Scopes {
	for i, known := range allScopes {
		if known == s {
			return 1 << i
		}
	}
	return 0
}

// ScopesOf returns the set of the given scopes.
func ScopesOf(scopes ...Scope) Scopes {
	var set Scopes
	for _, s := range scopes {
		set |= s.bit()
	}
	return set
}

// Has reports whether s holds scope (always false for a word that is not a scope).
func (s Scopes) Has(scope Scope) bool {
	bit := scope.bit()
	return bit != 0 && s&bit == bit
}

// List returns the scopes of s in their usual order (read, fork, ingest, admin).
func (s Scopes) List() []Scope {
	out := make([]Scope, 0, len(allScopes))
	for _, scope := range allScopes {
		if s.Has(scope) {
			out = append(out, scope)
		}
	}
	return out
}

// String renders s as a token file writes it: "read,fork", or "none".
func (s Scopes) String() string {
	list := s.List()
	if len(list) == 0 {
		return "none"
	}
	names := make([]string, len(list))
	for i, scope := range list {
		names[i] = string(scope)
	}
	return strings.Join(names, ",")
}

// parseScopeList reads a token file's scope column: comma-separated scope names, or "all".
func parseScopeList(column string) (Scopes, error) {
	if column == "all" {
		return AllScopes, nil
	}
	var set Scopes
	for _, name := range strings.Split(column, ",") {
		scope, ok := ParseScope(name)
		if !ok {
			return 0, fmt.Errorf("unknown scope %q (want read, fork, ingest, admin or all)", name)
		}
		set |= scope.bit()
	}
	return set, nil
}
