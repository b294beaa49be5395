package forkengine

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxProviderTextBytes bounds the explanation a provider gives (a fork's or a reconcile's error
// text) as it is stored in ForkOperation.Error and shown to every client of the workspace: 2 KiB,
// room for a paragraph, while a provider that answers a megabyte cannot make every operation
// row, event read and subscription message carry it.
const MaxProviderTextBytes = 2048

// providerTextCut ends a provider text that was cut at MaxProviderTextBytes.
const providerTextCut = "…"

// Fixed texts of outcomes whose own explanation cannot be shown: the details of a failed call
// (addresses, credentials in URLs, paths) go to the server log, with the operation id.
const (
	errTextCallFailed   = "provider call failed"
	errTextUnrecordable = "the provider's answer could not be recorded"
)

// cleanProviderText makes text that came from a provider fit to store and to show: invalid UTF-8
// becomes U+FFFD, control characters other than newline and tab are removed (a NUL cannot be
// stored on PostgreSQL, and escape sequences reach terminals and logs), so are the Unicode
// bidirectional controls (they make a text read as something else than it is), surrounding
// whitespace is trimmed, and the rest is cut at MaxProviderTextBytes, on a character boundary,
// ending with "…". A provider's answer is data: nothing in it may keep the engine from
// recording it.
func cleanProviderText(text string) string {
	if isCleanProviderText(text) {
		return strings.TrimSpace(text)
	}
	var b strings.Builder
	b.Grow(min(len(text), MaxProviderTextBytes))
	for _, r := range strings.ToValidUTF8(text, string(utf8.RuneError)) {
		if keepProviderRune(r) {
			b.WriteRune(r)
		}
		if b.Len() > 2*MaxProviderTextBytes {
			break // enough to cut from; the rest of a huge text is never looked at
		}
	}
	return cutProviderText(strings.TrimSpace(b.String()))
}

// isCleanProviderText is the fast path: short, valid and free of what cleanProviderText removes.
func isCleanProviderText(text string) bool {
	if len(text) > MaxProviderTextBytes || !utf8.ValidString(text) {
		return false
	}
	for _, r := range text {
		if !keepProviderRune(r) {
			return false
		}
	}
	return true
}

func keepProviderRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return true
	case unicode.IsControl(r):
		return false
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return false // bidirectional embeddings, overrides and isolates
	}
	return true
}

// cutProviderText bounds text to MaxProviderTextBytes, cutting on a rune boundary.
func cutProviderText(text string) string {
	if len(text) <= MaxProviderTextBytes {
		return text
	}
	end := MaxProviderTextBytes - len(providerTextCut)
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	return strings.TrimSpace(text[:end]) + providerTextCut
}

// clientText is what may be shown of err: the message of the domain error in its chain (written
// for clients), or errTextCallFailed for any other error, whose text (a driver's transport error
// names the adapter's URL) belongs in the server log only.
func clientText(err error) string {
	var domain *Error
	if errors.As(err, &domain) && domain.Message != "" {
		return domain.Message
	}
	return errTextCallFailed
}
