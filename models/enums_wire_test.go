package models

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// The hand-written enums (enums_wire.go) must hold exactly the schema's values, in its order, as
// the generated ones would.
func TestHandWrittenEnumsMatchSchema(t *testing.T) {
	raw, err := os.ReadFile("../schema.graphqls")
	require.NoError(t, err)
	schema, gqlErr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(raw)})
	require.Nil(t, gqlErr)
	values := func(name string) []string {
		var out []string
		for _, v := range schema.Types[name].EnumValues {
			out = append(out, v.Name)
		}
		return out
	}
	require.Equal(t, values("MessageRole"), stringsOf(AllMessageRole))
	require.Equal(t, values("TurnPhase"), stringsOf(AllTurnPhase))
	for _, v := range AllMessageRole {
		require.True(t, v.IsValid())
	}
	for _, v := range AllTurnPhase {
		require.True(t, v.IsValid())
	}
	require.False(t, MessageRole("user").IsValid())
	require.False(t, TurnPhase("DONE").IsValid())
}

func TestHandWrittenEnumsMarshal(t *testing.T) {
	var buf bytes.Buffer
	MessageRoleAssistant.MarshalGQL(&buf)
	TurnPhaseSettled.MarshalGQL(&buf)
	require.Equal(t, `"ASSISTANT""SETTLED"`, buf.String())
	require.Zero(t, testing.AllocsPerRun(100, func() { buf.Reset(); MessageRoleUser.MarshalGQL(&buf) }))

	var r MessageRole
	require.NoError(t, r.UnmarshalGQL("TOOL"))
	require.Equal(t, MessageRoleTool, r)
	require.EqualError(t, r.UnmarshalGQL("BOT"), "BOT is not a valid MessageRole")
	require.EqualError(t, r.UnmarshalGQL(3), "enums must be strings")
	var p TurnPhase
	require.NoError(t, p.UnmarshalJSON([]byte(`"RUNNING"`)))
	require.Equal(t, TurnPhaseRunning, p)
	require.Error(t, p.UnmarshalJSON([]byte(`"LATE"`)))
	out, err := TurnPhaseWaiting.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `"WAITING"`, string(out))
}

func stringsOf[E ~string](values []E) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}
