package forkengine

import (
	"errors"
	"fmt"
	"testing"
)

// The store's sentinels are Errors: one way to ask about a missing row, whoever coded it, and a
// duplicate that no other internal error passes for.
func TestSentinelsAreErrors(t *testing.T) {
	t.Parallel()
	miss := fmt.Errorf("read session s: %w", ErrNotFound)
	coded := fmt.Errorf("resolve: %w", Errorf(CodeNotFound, "session %q not found", "s"))
	for name, err := range map[string]error{"a store miss": miss, "a coded NOT_FOUND": coded} {
		if !errors.Is(err, ErrNotFound) || ErrorCode(err) != CodeNotFound {
			t.Errorf("%s: errors.Is(ErrNotFound) %v, code %s; want true, NOT_FOUND", name, errors.Is(err, ErrNotFound), ErrorCode(err))
		}
	}
	if errors.Is(Errorf(CodeForkConflict, "no"), ErrNotFound) || errors.Is(errors.New("not found"), ErrNotFound) {
		t.Error("another error passes for ErrNotFound")
	}

	dup := fmt.Errorf("insert turn t: %w: %w", ErrDuplicate, errors.New("UNIQUE constraint failed"))
	if !errors.Is(dup, ErrDuplicate) || ErrorCode(dup) != CodeInternal || ErrorReason(dup) != ReasonDuplicate {
		t.Errorf("a duplicate: errors.Is %v, code %s, reason %q", errors.Is(dup, ErrDuplicate), ErrorCode(dup), ErrorReason(dup))
	}
	for _, other := range []error{&Error{Code: CodeInternal, Message: "boom"}, Unavailable(errors.New("down")), ErrNotFound} {
		if errors.Is(other, ErrDuplicate) {
			t.Errorf("%v passes for ErrDuplicate", other)
		}
	}
}
