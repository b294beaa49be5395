package transports

import (
	"encoding/json"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
)

// lastValidData is the last response whose data was found to be valid JSON. The subscribers of a
// shared subscription are handed the very same *graphql.Response for an event (see resolvers'
// shared execution), so its data is checked once per event, not once per subscriber; every
// subscriber's message is then the response's payload behind its own id. Holding the pointer
// keeps that response alive, so a later response can never be mistaken for it.
var lastValidData atomic.Pointer[graphql.Response]

// validData reports whether resp.Data is valid JSON, checking each response once.
func validData(resp *graphql.Response) bool {
	if lastValidData.Load() == resp {
		return true
	}
	if !json.Valid(resp.Data) {
		return false
	}
	lastValidData.Store(resp)
	return true
}
