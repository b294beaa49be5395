package store

import (
	"encoding/json"
	"fmt"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The target a fork froze at prepare (forkengine.ForkTarget: settings, model, cwd, runtime
// context) is one JSON column of its operation, NULL when the request named none. It is written
// by the insert only: like the snapshot, it never changes afterwards, so it is not one of the
// compare-and-swap's columns. The dispatch-only values of a request (environment, provider
// target ref) have no column anywhere.
var targetMigration = migration{version: 21, name: "fork target settings", statements: []string{
	`ALTER TABLE fork_operations ADD COLUMN target TEXT`,
}}

// encodeTarget is the column value of op's frozen target.
func encodeTarget(op *forkengine.ForkOperation) (*string, error) {
	if op.Target == nil {
		return nil, nil
	}
	raw, err := json.Marshal(op.Target)
	if err != nil {
		return nil, fmt.Errorf("encode target of operation %s: %w", op.ID, err)
	}
	return rawPtr(raw), nil
}

// decodeTarget sets op's frozen target from its column's value.
func decodeTarget(op *forkengine.ForkOperation, column *string) error {
	op.Target = nil
	if column == nil {
		return nil
	}
	var t forkengine.ForkTarget
	if err := json.Unmarshal([]byte(*column), &t); err != nil {
		return fmt.Errorf("decode target of operation %s: %w", op.ID, err)
	}
	t.Settings, t.PreparedContext = nullToNil(t.Settings), nullToNil(t.PreparedContext)
	op.Target = &t
	return nil
}
