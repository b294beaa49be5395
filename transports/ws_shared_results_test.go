package transports

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/forkgraph/forkgraph/streamside"
)

// The subscribers of a shared subscription get one response: each message carries its own id
// around the same payload, and data that is not JSON is refused every time, shared or not.
func TestEncodeResult_SharedResponse(t *testing.T) {
	shared := streamside.NewShared(&graphql.Response{Data: json.RawMessage(`{"workspaceEvents":{"cursor":"c1"}}`), Extensions: map[string]any{}})
	for _, id := range []string{"1", "2", "a long id"} {
		_, side := streamside.With(context.Background())
		side.Responded(shared)
		var prefix resultPrefix
		frame, err := prefix.encode(id, "next", shared.Response(), side)
		if err != nil {
			t.Fatal(err)
		}
		quoted, _ := json.Marshal(id)
		want := `{"id":` + string(quoted) + `,"type":"next","payload":{"data":{"workspaceEvents":{"cursor":"c1"}}}}`
		if !bytes.Equal(frame, []byte(want)) {
			t.Fatalf("id %s: %s, want %s", id, frame, want)
		}
	}
	broken := streamside.NewShared(&graphql.Response{Data: json.RawMessage(`{"a":`)})
	for range 2 {
		_, side := streamside.With(context.Background())
		side.Responded(broken)
		var prefix resultPrefix
		if _, err := prefix.encode("1", "next", broken.Response(), side); err == nil {
			t.Fatal("invalid shared data encoded")
		}
		if _, err := encodeResult("1", "next", broken.Response()); err == nil {
			t.Fatal("invalid data encoded")
		}
	}
}
