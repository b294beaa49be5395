package forkengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Input limits. They keep one request from holding a transaction (or the event log) hostage.
const (
	MaxIDLength          = 200
	MaxMessageBytes      = 1 << 20 // 1 MiB of content per message
	MaxMessagesPerAppend = 1000
)

// ReasonMessageConflict marks an append that reuses a message id with other content.
const ReasonMessageConflict = "message_conflict"

// MaxTextLength bounds the free-text fields of a report (provider, title, cwd, model, ...), and
// MaxJSONBytes its JSON objects (settings, provider turn binding).
const (
	MaxTextLength = 4096
	MaxJSONBytes  = 64 << 10
)

// ReasonInvalidID marks a BAD_USER_INPUT for an id (or an identifier-like field such as a
// provider or a model) that breaks the id rules.
const ReasonInvalidID = "invalid_id"

// ReasonInvalidText marks a BAD_USER_INPUT for free text (a title, a cwd, a turn's origin, a
// message's content, an abandon reason, the text of a JSON object) that is not valid UTF-8 or
// holds U+0000.
const ReasonInvalidText = "invalid_text"

// cleanID checks an id: non-empty, at most MaxIDLength bytes, valid UTF-8, free of control
// characters (ids end up in logs, cursors and URLs) and without leading or trailing whitespace.
// It never trims: " a" and "a" are different ids to a store, so accepting one as the other on
// writes but not on reads would let a write land on a row a read cannot find. Errors:
// BAD_USER_INPUT with reason invalid_id.
func cleanID(field, id string) (string, error) {
	if id == "" {
		return "", ReasonErrorf(CodeInvalid, ReasonInvalidID, "%s is required", field)
	}
	if len(id) > MaxIDLength {
		return "", ReasonErrorf(CodeInvalid, ReasonInvalidID, "%s is longer than %d characters", field, MaxIDLength)
	}
	return id, checkIdentifier(field, id)
}

// checkIdentifier applies the character rules of ids to a value. Errors: BAD_USER_INPUT with
// reason invalid_id.
func checkIdentifier(field, value string) error {
	if !utf8.ValidString(value) || strings.IndexFunc(value, unicode.IsControl) >= 0 {
		return ReasonErrorf(CodeInvalid, ReasonInvalidID, "%s must be valid UTF-8 without control characters", field)
	}
	first, _ := utf8.DecodeRuneInString(value)
	last, _ := utf8.DecodeLastRuneInString(value)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return ReasonErrorf(CodeInvalid, ReasonInvalidID, "%s must not start or end with whitespace: %q", field, value)
	}
	return nil
}

// ValidateID applies the id rules of every input (non-empty, at most MaxIDLength, no control
// characters, no leading or trailing whitespace; never trimmed) to one value. Errors:
// BAD_USER_INPUT with reason invalid_id.
func ValidateID(field, id string) error {
	_, err := cleanID(field, id)
	return err
}

// identifierFields are the free-text fields that name things rather than describe them: they
// follow the character rules of ids too (a NUL or an ANSI escape in a provider name reaches
// logs and terminals; a trailing space makes a second provider). A session report's fields say
// so by their tag instead (check:"identifier", session_fields.go).
var identifierFields = map[string]bool{
	"provider": true, "providerSessionId": true, "providerTurnId": true, "model": true,
}

// checkText bounds one free-text field and applies checkStorable to it; an identifier-like one
// (identifierFields), when not empty, must follow the character rules of ids instead, which are
// stricter. Errors: BAD_USER_INPUT (reason invalid_text or invalid_id).
func checkText(field string, value *string) error {
	return checkTextAs(field, value, identifierFields[field])
}

// checkTextAs is checkText for a field that is identifier-like when identifier says so.
func checkTextAs(field string, value *string, identifier bool) error {
	if value == nil {
		return nil
	}
	if len(*value) > MaxTextLength {
		return Errorf(CodeInvalid, "%s is longer than %d bytes", field, MaxTextLength)
	}
	if identifier && *value != "" {
		return checkIdentifier(field, *value)
	}
	return checkStorable(field, *value)
}

// checkStorable is the one rule every piece of free text follows: valid UTF-8, without U+0000.
// PostgreSQL refuses both in a TEXT column (SQLSTATE 22021) where SQLite keeps them, so without
// this rule one database would store what the other fails on, and a value written on SQLite
// could never move to PostgreSQL. Any other character, control characters included (a message
// may quote a terminal's colours), is kept as it was sent. Errors: BAD_USER_INPUT with reason
// invalid_text.
func checkStorable(field, value string) error {
	if strings.IndexByte(value, 0) >= 0 || !utf8.ValidString(value) {
		return ReasonErrorf(CodeInvalid, ReasonInvalidText, "%s must be valid UTF-8 without NUL (U+0000) characters", field)
	}
	return nil
}

// checkTexts checks several free-text fields and reports the first invalid one, in name order
// so the error does not depend on map iteration.
func checkTexts(fields map[string]*string) error {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := checkText(name, fields[name]); err != nil {
			return err
		}
	}
	return nil
}

// Check applies the input rules to a filter a client gave: its provider follows the rules of the
// provider sessions are reported with, so a value no report could have stored is refused instead
// of matching nothing (on SQLite) or failing the read (on PostgreSQL, for a NUL). Errors:
// BAD_USER_INPUT with reason invalid_id; invalid_search for search words ParseSearch would not
// have made (too many, or one that is not a word).
func (f SessionFilter) Check() error {
	if len(f.Search) > MaxSearchTerms {
		return ReasonErrorf(CodeInvalid, ReasonInvalidSearch, "search has %d words; at most %d", len(f.Search), MaxSearchTerms)
	}
	for _, term := range f.Search {
		if got := SearchTerms(term); len(got) != 1 || got[0] != term {
			return ReasonErrorf(CodeInvalid, ReasonInvalidSearch, "search word %q is not one folded word", term)
		}
	}
	if f.Provider == "" {
		return nil
	}
	return checkText("provider", &f.Provider)
}

// idField names one id of an input for cleanIDs.
type idField struct {
	name  string
	value *string
}

// cleanIDs checks several ids and reports the first invalid one; it changes none of them.
func cleanIDs(fields ...idField) error {
	for _, f := range fields {
		if _, err := cleanID(f.name, *f.value); err != nil {
			return err
		}
	}
	return nil
}

// objectOrNil checks that raw, when given, is a JSON object. Nil (or empty) means "keep". The
// object is stored as the JSON text it is (the stores never decode it), so that text follows the
// free-text rule: valid UTF-8, and no raw NUL, which valid JSON cannot hold anyway. An escaped
// one ("\u0000" in a string) is six ASCII characters of that text and is kept: only the driver
// that owns the object decodes it, and what a driver answers is made storable
// (cleanProviderText) before it is recorded. Errors: BAD_USER_INPUT (reason invalid_text for
// invalid UTF-8).
func objectOrNil(field string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if len(raw) > MaxJSONBytes {
		return nil, Errorf(CodeInvalid, "%s is larger than %d bytes", field, MaxJSONBytes)
	}
	if !utf8.Valid(raw) {
		return nil, ReasonErrorf(CodeInvalid, ReasonInvalidText, "%s must be valid UTF-8", field)
	}
	obj, ok := jsonObject(raw)
	if !ok {
		return nil, Errorf(CodeInvalid, "%s must be a JSON object", field)
	}
	return obj, nil
}

// sameJSON reports whether two JSON documents are equal up to whitespace and key order, so an
// identical re-report is recognised even when a store re-encoded what it was given.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va) // maps marshal with sorted keys
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}

// readError maps a store miss of one row to a client NOT_FOUND error and wraps any other read
// failure with context.
func readError(err error, what, id string) error {
	if errors.Is(err, ErrNotFound) {
		return Errorf(CodeNotFound, "%s %q not found", what, id)
	}
	return fmt.Errorf("read %s %s: %w", what, id, err)
}

// nonEmptyObject reports whether raw is a JSON object with at least one key.
func nonEmptyObject(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	return json.Unmarshal(raw, &obj) == nil && len(obj) > 0
}
