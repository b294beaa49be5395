package forkengine

import (
	"encoding/base64"
	"testing"
)

// Copied ids are part of stored data: the same operation must mint the same ids in every
// version. The reference is the definition in forkIDs' comment, spelled with digest, plus one
// literal so that a change to digest itself shows too.
func TestForkIDsAreTheDocumentedDigest(t *testing.T) {
	t.Parallel()
	op := ForkOperation{WorkspaceID: "ws", ID: "op-1", SourceSessionID: "src", TargetSessionID: "dst"}
	ids := newForkIDs(op)
	prefixSum := digest(identityNamespace, "prefix", "ws", "op-1", "src", "dst")
	prefix := "f" + base64.RawURLEncoding.EncodeToString(prefixSum[:8])
	for _, c := range []struct{ kind, source, got string }{
		{"turn", "turn-1", ids.turn("turn-1")},
		{"message", "message-1", ids.message("message-1")},
		{"message", "", ids.message("")},
		{"turn", "turn-1", ids.turn("turn-1")}, // from the turn cache
	} {
		sum := digest(identityNamespace, "ws", "op-1", "src", "dst", c.kind, c.source)
		want := prefix + c.kind[:1] + base64.RawURLEncoding.EncodeToString(sum[:8])
		if c.got != want {
			t.Errorf("%s id of %q = %q, want %q", c.kind, c.source, c.got, want)
		}
	}
	if got, want := ids.message("message-1"), "fNi1QrU5cgzgmcNFJ8iujFRE"; got != want {
		t.Errorf("message id = %q, want %q (ids of stored forks must not change)", got, want)
	}
}
