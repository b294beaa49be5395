package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/forkengine/forkenginetest"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// transcriptMark is in every message of the sources, so a /fork body that carried any of the
// transcript would hold it.
const transcriptMark = "TRANSCRIPT-TEXT"

// TestForkRequestHasTheSameSizeForAnyTranscript: the /fork body the driver sends for a fork the
// engine dispatches has the same size for a source of 1 short turn and one of 300 turns of two
// 8 KiB messages each (4.8 MB of transcript), apart from the digits of the three numbers that count the prefix
// (the boundary's sequence, prefixTurns and boundTurns), holds no message text, and stays under
// the 1 MiB docs/providers.md ("POST /fork") documents: the prefix is counted, never sent.
func TestForkRequestHasTheSameSizeForAnyTranscript(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	bodies := map[string][]byte{} // by Forkgraph-Operation-Id
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read %s: %v", r.URL.Path, err)
		}
		switch r.URL.Path {
		case "/adapter/describe":
			reply(w, 200, `{"kind":"k","version":"1","stateBindingMode":"host_copy","throughTurn":true}`)
		case "/adapter/probe":
			reply(w, 200, `{"forkable":[true]}`)
		case "/adapter/fork":
			mu.Lock()
			bodies[r.Header.Get("Forkgraph-Operation-Id")] = body
			mu.Unlock()
			reply(w, 200, `{"disposition":"accepted","providerSessionId":"child-`+r.Header.Get("Forkgraph-Operation-Id")+`"}`)
		default:
			t.Errorf("unexpected %s", r.URL.Path)
		}
	}))
	t.Cleanup(srv.Close)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) // every time on the wire has one length
	e, err := forkengine.New(forkengine.Config{
		Store: forkenginetest.NewMemStore(), NoBackground: true, Clock: func() time.Time { return at },
		Drivers: map[string]forkengine.Driver{"webhook": webhook.New(webhook.Options{BaseURL: srv.URL + "/adapter"})},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Close(context.Background()) })

	// Ids of one length in both sources, so only the transcript's length differs.
	fork := func(name string, turns, messageBytes int) []byte {
		ctx := context.Background()
		_, err := e.ReportSession(ctx, forkengine.SessionReport{WorkspaceID: "ws", ID: "src-" + name, Provider: "webhook",
			ProviderSessionID: ptr("prov-" + name), Title: ptr("Plan")})
		require.NoError(t, err)
		content := transcriptMark + strings.Repeat("x", messageBytes-len(transcriptMark))
		var last string
		for i := 1; i <= turns; i++ {
			last = fmt.Sprintf("%s-t%03d", name, i)
			_, err := e.ReportTurn(ctx, forkengine.TurnReport{WorkspaceID: "ws", SessionID: "src-" + name, ID: last,
				Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
				ProviderTurnID: ptr("p-" + last), ProviderTurnBinding: json.RawMessage(`{"k":"` + last + `"}`)})
			require.NoError(t, err)
			_, err = e.AppendMessages(ctx, forkengine.MessageAppend{WorkspaceID: "ws", SessionID: "src-" + name, TurnID: last,
				Messages: []forkengine.MessageInput{
					{ID: last + "-u", Role: forkengine.RoleUser, Content: content},
					{ID: last + "-a", Role: forkengine.RoleAssistant, Content: content},
				}})
			require.NoError(t, err)
		}
		op, err := e.StartFork(ctx, forkengine.ForkInput{WorkspaceID: "ws", SourceSessionID: "src-" + name,
			ThroughTurnID: last, RequestID: "req-" + name})
		require.NoError(t, err)
		op, err = e.ProcessOperation(ctx, "ws", op.ID)
		require.NoError(t, err)
		require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
		mu.Lock()
		defer mu.Unlock()
		body, ok := bodies[op.ID]
		require.True(t, ok, "the adapter received /fork for %s", op.ID)
		var wire struct{ PrefixTurns, BoundTurns int }
		require.NoError(t, json.Unmarshal(body, &wire))
		require.Equal(t, turns, wire.PrefixTurns, "the prefix is counted")
		require.Equal(t, turns, wire.BoundTurns)
		require.NotContains(t, string(body), transcriptMark, "no message text is sent")
		return body
	}
	const long = 300
	short, longBody := fork("a", 1, len(transcriptMark)), fork("b", long, 8<<10)
	// The boundary's sequence, prefixTurns and boundTurns are the turn count, in decimal.
	digits := 3 * (len(strconv.Itoa(long)) - len(strconv.Itoa(1)))
	require.Equal(t, len(short)+digits, len(longBody),
		"a /fork of %d turns of 16 KiB, against one of 1 short turn\n%s\n%s", long, short, longBody)
	require.Less(t, len(longBody), 1<<20, "under the documented 1 MiB")
	t.Logf("/fork body: %d bytes for 1 turn, %d for %d turns of 16 KiB", len(short), len(longBody), long)
}
