package models_test

import (
	"testing"

	"github.com/forkgraph/forkgraph/models"
)

// FuzzGlobalIDRoundTrip checks both directions of the id encoding: every (type, workspace, local
// id) with non-empty parts encodes to a string that decodes to exactly those parts, and every
// string that decodes encodes back to itself (one spelling per object, so a client cache never
// holds one object under two ids).
func FuzzGlobalIDRoundTrip(f *testing.F) {
	for _, seed := range [][2]string{
		{"demo", "billing-refactor"}, {"a:b", "c:d"}, {"%", "%3A"}, {"%25", "::"}, {"wörk", "\u00a0"},
		{"Session:w:s", "Turn:x:y"},
	} {
		f.Add(seed[0], seed[1], uint8(0))
	}
	types := []models.NodeType{models.NodeSession, models.NodeTurn, models.NodeMessage, models.NodeForkOperation, models.NodeLineage}
	f.Fuzz(func(t *testing.T, ws, local string, typeIndex uint8) {
		typ := types[int(typeIndex)%len(types)]
		if ws != "" && local != "" {
			id := models.GlobalID(typ, ws, local)
			ref, ok := models.ParseGlobalID(id)
			if !ok || ref != (models.GlobalRef{Type: typ, WorkspaceID: ws, LocalID: local}) {
				t.Fatalf("GlobalID(%s, %q, %q) = %q decodes to %+v, %v", typ, ws, local, id, ref, ok)
			}
		}
		// Any string (here: the fuzzed parts joined raw) that decodes must be the one spelling.
		raw := string(typ) + ":" + ws + ":" + local
		if ref, ok := models.ParseGlobalID(raw); ok && ref.String() != raw {
			t.Fatalf("%q decodes to %+v, which encodes to %q", raw, ref, ref.String())
		}
	})
}
