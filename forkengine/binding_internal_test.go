package forkengine

import (
	"encoding/json"
	"testing"
)

// isNonEmptyObject must answer exactly what decoding into a map and counting its entries did.
func TestIsNonEmptyObjectMatchesDecoding(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		``, ` `, `null`, `{}`, ` { } `, "{\n}", `{"a":1}`, ` {"a":1} `, `{"a":1,"a":2}`, `{"":null}`,
		`[]`, `[1]`, `"x"`, `1`, `true`, `{`, `{"a":}`, `{"a":1}x`, `{"a":1} {}`, `{} `, "\t{\"n\":{}}\n",
	} {
		var obj map[string]json.RawMessage
		want := json.Unmarshal([]byte(raw), &obj) == nil && len(obj) > 0
		if got := isNonEmptyObject(json.RawMessage(raw)); got != want {
			t.Errorf("isNonEmptyObject(%q) = %v, decoding says %v", raw, got, want)
		}
	}
}
