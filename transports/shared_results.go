package transports

import (
	"encoding/json"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
)

// validResponses remembers the last few responses whose data was found to be valid JSON. The
// subscribers of a shared subscription are handed the very same *graphql.Response for an event
// (see resolvers' shared execution), so its data is checked once per event, not once per
// subscriber; every subscriber's message is then the response's payload behind its own id.
// Several slots, because a busy server fans out more than one event (or group) at a time.
// Holding a pointer keeps its response alive, so a later response can never be mistaken for it.
var validResponses struct {
	slots [8]atomic.Pointer[graphql.Response]
	next  atomic.Uint32
}

// validData reports whether resp.Data is valid JSON, checking a shared response once.
func validData(resp *graphql.Response) bool {
	for i := range validResponses.slots {
		if validResponses.slots[i].Load() == resp {
			return true
		}
	}
	if !json.Valid(resp.Data) {
		return false
	}
	slot := validResponses.next.Add(1) % uint32(len(validResponses.slots))
	validResponses.slots[slot].Store(resp)
	return true
}
