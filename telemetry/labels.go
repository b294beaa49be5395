package telemetry

import "sync"

// Label bounds. Operation names come from clients, so only the first maxOperationNames distinct
// ones get a label value of their own; later ones are counted as otherLabel. Error codes come
// from forkgraph and gqlgen, a small fixed set, bounded the same way in case of a bug.
const (
	maxOperationNames = 200
	maxErrorCodes     = 64
	maxNameLength     = 64
	otherLabel        = "other"
)

// labelSet admits at most max distinct label values; later ones become otherLabel.
type labelSet struct {
	mu   sync.Mutex
	max  int
	seen map[string]struct{}
}

func newLabelSet(max int) *labelSet { return &labelSet{max: max, seen: map[string]struct{}{}} }

// value returns v when it is admitted (seen before, or room is left), else otherLabel.
func (s *labelSet) value(v string) string {
	if len(v) > maxNameLength {
		return otherLabel
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[v]; ok {
		return v
	}
	if len(s.seen) >= s.max {
		return otherLabel
	}
	s.seen[v] = struct{}{}
	return v
}

// websocketCloseCodes are the close codes with a label value of their own: RFC 6455's and the
// ones the transports send. A client may send any code; the rest are otherLabel.
var websocketCloseCodes = map[int]string{
	0: "none", 1000: "1000", 1001: "1001", 1002: "1002", 1003: "1003", 1005: "1005", 1006: "1006",
	1007: "1007", 1008: "1008", 1009: "1009", 1011: "1011", 1013: "1013",
	4400: "4400", 4401: "4401", 4403: "4403", 4408: "4408", 4409: "4409", 4429: "4429", 4500: "4500",
}

func closeCodeLabel(code int) string {
	if s, ok := websocketCloseCodes[code]; ok {
		return s
	}
	return otherLabel
}
