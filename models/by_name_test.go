package models_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/models"
)

// The derived mapping of a session report carries every field: each set to a value of its own,
// the JSON scalars as raw JSON, an absent or null JSON value as nil, and the kind through its enum.
func TestReportSessionInputMapsEveryField(t *testing.T) {
	str := func(s string) *string { return &s }
	hidden, child := false, models.SessionKindChild
	in := models.ReportSessionInput{WorkspaceID: "w", ID: "s", Kind: &child, Provider: "p",
		ProviderSessionID: str("ps"), Title: str("t"), RailSectionKey: str("r"), Cwd: str("/c"), Model: str("m"),
		Settings: models.JSON(`{"a":1}`), Metadata: models.JSON(`{"b":2}`), Visible: &hidden}
	require.Equal(t, forkengine.SessionReport{WorkspaceID: "w", ID: "s", Kind: forkengine.SessionChild, Provider: "p",
		ProviderSessionID: str("ps"), Title: str("t"), RailSectionKey: str("r"), Cwd: str("/c"), Model: str("m"),
		Settings: json.RawMessage(`{"a":1}`), Metadata: json.RawMessage(`{"b":2}`), Visible: &hidden}, in.Domain())

	bare := models.ReportSessionInput{WorkspaceID: "w", ID: "s", Provider: "p", Settings: models.JSON("null")}
	require.Equal(t, forkengine.SessionReport{WorkspaceID: "w", ID: "s", Kind: forkengine.SessionRoot, Provider: "p"}, bare.Domain())
}
