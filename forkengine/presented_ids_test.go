package forkengine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// Presented ids round-trip, and only the spelling PresentedTurnID writes decodes: another
// spelling of the same number would be a second id of one turn.
func TestPresentedIDsRoundTripInOneSpelling(t *testing.T) {
	const key = "UVaWRqmzk-8"
	for _, seq := range []int64{1, 9, 10, 35, 36, 1295, 1 << 40} {
		key2, seq2, ok := forkengine.ParsePresentedTurnID(forkengine.PresentedTurnID(key, seq))
		require.True(t, ok, seq)
		require.Equal(t, key, key2)
		require.Equal(t, seq, seq2)
		k, s, p, ok := forkengine.ParsePresentedMessageID(forkengine.PresentedMessageID(key, seq, seq+7))
		require.True(t, ok, seq)
		require.Equal(t, []any{key, seq, seq + 7}, []any{k, s, p})
	}
	require.Equal(t, "h"+key+"-tz", forkengine.PresentedTurnID(key, 35))
	require.Equal(t, "h"+key+"-m10.a", forkengine.PresentedMessageID(key, 36, 10))
	for _, rest := range []string{"", "0", "0z", "Z", "+z", "-1", "z_", "1 ", "zzzzzzzzzzzzzzzzzzzz"} {
		_, _, ok := forkengine.ParsePresentedTurnID("h" + key + "-t" + rest)
		require.False(t, ok, rest)
	}
}

// A plain message is presented without touching its parts; a typed one has its references
// presented, and both get the child's ids.
func TestPresentMessageOfTurnIsPresentMessage(t *testing.T) {
	h := forkengine.History{WorkspaceID: "ws", SessionID: "child", Key: "UVaWRqmzk-8"}
	m := forkengine.Message{WorkspaceID: "ws", ID: "m1", SessionID: "owner", TurnID: "t1", Position: 40, Content: "x"}
	got := forkengine.PresentMessage(h, nil, 12, m)
	require.Equal(t, got, forkengine.PresentMessageOfTurn(h, nil, forkengine.PresentedTurnID(h.Key, 12), 12, m))
	require.Equal(t, forkengine.Message{WorkspaceID: "ws", ID: forkengine.PresentedMessageID(h.Key, 12, 40), SessionID: "child",
		TurnID: forkengine.PresentedTurnID(h.Key, 12), Position: 40, Content: "x"}, got)
	require.Nil(t, got.Parts)
}
