package forkengine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// cleanID trims an id and checks it is non-empty, at most MaxIDLength bytes, valid UTF-8 and free
// of control characters (ids end up in logs, cursors and URLs).
func cleanID(field, id string) (string, error) {
	id = strings.TrimSpace(id)
	switch {
	case id == "":
		return "", Errorf(CodeInvalid, "%s is required", field)
	case len(id) > MaxIDLength:
		return "", Errorf(CodeInvalid, "%s is longer than %d characters", field, MaxIDLength)
	case !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0:
		return "", Errorf(CodeInvalid, "%s must be valid UTF-8 without control characters", field)
	}
	return id, nil
}

// ValidateID applies the id rules of every input (non-empty after trimming, at most MaxIDLength,
// no control characters) to one value. Errors: BAD_USER_INPUT.
func ValidateID(field, id string) error {
	_, err := cleanID(field, id)
	return err
}

// checkText bounds one free-text field. Errors: BAD_USER_INPUT.
func checkText(field string, value *string) error {
	if value != nil && len(*value) > MaxTextLength {
		return Errorf(CodeInvalid, "%s is longer than %d bytes", field, MaxTextLength)
	}
	return nil
}

// checkTexts bounds several free-text fields and reports the first that is too long.
func checkTexts(fields map[string]*string) error {
	for name, value := range fields {
		if err := checkText(name, value); err != nil {
			return err
		}
	}
	return nil
}

// idField names one id of an input for cleanIDs.
type idField struct {
	name  string
	value *string
}

// cleanIDs trims several ids in place and reports the first invalid one.
func cleanIDs(fields ...idField) error {
	for _, f := range fields {
		id, err := cleanID(f.name, *f.value)
		if err != nil {
			return err
		}
		*f.value = id
	}
	return nil
}

// objectOrNil checks that raw, when given, is a JSON object. Nil (or empty) means "keep".
func objectOrNil(field string, raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if len(raw) > MaxJSONBytes {
		return nil, Errorf(CodeInvalid, "%s is larger than %d bytes", field, MaxJSONBytes)
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
