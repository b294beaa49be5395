package forkengine_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/forkgraph/forkgraph/forkengine"
)

// FuzzValidateID checks the id rules against a plain statement of them: an id is accepted
// exactly when it is non-empty, at most MaxIDLength bytes, valid UTF-8, free of control
// characters and without leading or trailing whitespace; a refusal is BAD_USER_INPUT with
// reason invalid_id. Ids are never trimmed, so an accepted id is its own TrimSpace.
func FuzzValidateID(f *testing.F) {
	for _, seed := range []string{"billing-refactor", " billing-refactor", "demo ", "a\tb", "a\x00b", "\x1b[31m",
		"\u00a0x", "x\u2028", "\xff", strings.Repeat("x", forkengine.MaxIDLength), strings.Repeat("x", forkengine.MaxIDLength+1),
		"", "ü", "a b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		want := id != "" && len(id) <= forkengine.MaxIDLength && utf8.ValidString(id) &&
			strings.IndexFunc(id, unicode.IsControl) < 0 && strings.TrimFunc(id, unicode.IsSpace) == id
		err := forkengine.ValidateID("id", id)
		if (err == nil) != want {
			t.Fatalf("ValidateID(%q) = %v, want accepted=%v", id, err, want)
		}
		if err != nil && (forkengine.ErrorCode(err) != forkengine.CodeInvalid || forkengine.ErrorReason(err) != forkengine.ReasonInvalidID) {
			t.Fatalf("ValidateID(%q): %v", id, err)
		}
		if err == nil && strings.TrimSpace(id) != id {
			t.Fatalf("accepted %q, which trimming would change", id)
		}
	})
}
