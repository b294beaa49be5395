package models

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON is the GraphQL JSON scalar: any JSON value, kept as raw bytes so the engine can check it
// (settings and provider bindings must be JSON objects; the engine rejects anything else with
// BAD_USER_INPUT).
type JSON json.RawMessage

// UnmarshalGQL accepts any value the GraphQL layer decoded from variables or a literal.
func (j *JSON) UnmarshalGQL(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("JSON scalar: %w", err)
	}
	*j = raw
	return nil
}

// MarshalGQL writes the raw JSON; an empty value is written as null.
func (j JSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}
