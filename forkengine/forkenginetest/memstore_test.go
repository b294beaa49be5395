package forkenginetest

import (
	"testing"

	"github.com/forkgraph/forkgraph/forkengine"
)

// TestMemStore holds the fake to the same contract as the SQL store, so it cannot drift.
func TestMemStore(t *testing.T) {
	RunStoreTests(t, func(*testing.T) forkengine.Store { return NewMemStore() })
}
