package transports

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// The subscribers of a shared subscription get one response: each message carries its own id
// around the same payload, and data that is not JSON is refused every time, never remembered as
// checked.
func TestEncodeResult_SharedResponse(t *testing.T) {
	shared := &graphql.Response{Data: json.RawMessage(`{"workspaceEvents":{"cursor":"c1"}}`), Extensions: map[string]any{}}
	for _, id := range []string{"1", "2", "a long id"} {
		frame, err := encodeResult(id, "next", shared)
		if err != nil {
			t.Fatal(err)
		}
		quoted, _ := json.Marshal(id)
		want := `{"id":` + string(quoted) + `,"type":"next","payload":{"data":{"workspaceEvents":{"cursor":"c1"}}}}`
		if !bytes.Equal(frame, []byte(want)) {
			t.Fatalf("id %s: %s, want %s", id, frame, want)
		}
	}
	broken := &graphql.Response{Data: json.RawMessage(`{"a":`)}
	for range 2 {
		if _, err := encodeResult("1", "next", broken); err == nil {
			t.Fatal("invalid data encoded")
		}
	}
}
