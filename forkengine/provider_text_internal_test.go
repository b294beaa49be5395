package forkengine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanProviderText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxProviderTextBytes) // 2 bytes a character: twice the bound
	tests := []struct {
		name, in, want string
	}{
		{"OKPlain", "the provider is busy", "the provider is busy"},
		{"OKNewlinesAndTabsKept", "line one\n\tline two", "line one\n\tline two"},
		{"OKTrimmed", "  padded \n", "padded"},
		{"NULRemoved", "a\x00b", "ab"},
		{"EscapeSequenceRemoved", "\x1b[31mred\x1b[0m", "[31mred[0m"},
		{"CarriageReturnAndDeleteRemoved", "over\rwrite\x7f", "overwrite"},
		{"C1ControlRemoved", "a\u0085b\u009bc", "abc"},
		{"InvalidUTF8Replaced", "caf\xc3 \xff", "caf\ufffd \ufffd"},
		{"BidiControlsRemoved", "\u202eevil\u202c \u2066x\u2069", "evil x"},
		{"OnlyControls", "\x00\x01\x02", ""},
		// 2,045 bytes would end inside an "é": the cut goes back to the character's start.
		{"CutOnACharacterBoundary", long, strings.Repeat("é", (MaxProviderTextBytes-len(providerTextCut))/2) + providerTextCut},
		{"CutAfterCleaning", strings.Repeat("\x00", 10) + strings.Repeat("a", 3*MaxProviderTextBytes),
			strings.Repeat("a", MaxProviderTextBytes-len(providerTextCut)) + providerTextCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cleanProviderText(tt.in)
			if got != tt.want {
				t.Fatalf("cleanProviderText(%.60q) = %.60q, want %.60q", tt.in, got, tt.want)
			}
			if len(got) > MaxProviderTextBytes || !utf8.ValidString(got) {
				t.Fatalf("cleanProviderText(%.60q) = %d bytes, valid %v", tt.in, len(got), utf8.ValidString(got))
			}
			if again := cleanProviderText(got); again != got {
				t.Fatalf("not idempotent: %.60q then %.60q", got, again)
			}
		})
	}
}

// A clean text within the bound is returned as it is, without a copy: every recorded answer
// passes through cleanProviderText.
func TestCleanProviderTextKeepsCleanTextWithoutAllocating(t *testing.T) {
	in := "provider rejected the fork: the session is archived"
	if n := testing.AllocsPerRun(100, func() { _ = cleanProviderText(in) }); n != 0 {
		t.Fatalf("%v allocations for a clean text", n)
	}
}
