package transports

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/vektah/gqlparser/v2/gqlerror"
)

// encodeHTTPResult writes data-only responses around gqlgen's bytes; every response must still
// decode to what json.Marshal gives, and invalid data must stay an error.
func TestEncodeHTTPResultMatchesMarshal(t *testing.T) {
	for name, res := range map[string]*result{
		"data":            {Data: json.RawMessage(`{"a":[1,2],"s":"<b> & c"}`)},
		"data and errors": {Data: json.RawMessage(`{"a":null}`), Errors: gqlerror.List{{Message: "boom"}}},
		"errors only":     {Errors: gqlerror.List{{Message: "bad"}}},
		"extensions":      {Data: json.RawMessage(`{}`), Extensions: map[string]any{"cost": 3}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := encodeHTTPResult(res)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(res)
			var g, w any
			if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
				t.Fatalf("got %s, json.Marshal gives %s", got, want)
			}
		})
	}
	if _, err := encodeHTTPResult(&result{Data: json.RawMessage(`{"a":`)}); err == nil {
		t.Fatal("invalid data encoded without an error")
	}
}
